"""The checkpoint's chat template for a processor that ``transformers`` loads without it.

``ProcessorMixin.from_pretrained`` reads the checkpoint's ``chat_template.jinja`` but passes it on only to processor
classes whose ``__init__`` names a ``chat_template`` argument; a class that takes it through ``**kwargs``
(``Phi4MultimodalProcessor`` in ``transformers`` 5.23) is built without it, although its own ``save_pretrained`` wrote
it. mmbatch then gives that processor the template ``transformers`` resolved for it, so the model is prompted in its
own chat format rather than refused as having none.
"""

from __future__ import annotations

from typing import Any


def checkpoint_chat_template(processor: Any, model_id: str, revision: str | None, *,
                             trust_remote_code: bool) -> Any:
    """The chat template the checkpoint holds for ``processor``'s class (a string, or a dict of named templates), as
    ``transformers`` resolves it (``get_processor_dict``), or None where it holds none."""
    get_processor_dict = getattr(type(processor), "get_processor_dict", None)
    if get_processor_dict is None:
        return None
    processor_dict, _ = get_processor_dict(model_id, revision=revision, trust_remote_code=trust_remote_code)
    return processor_dict.get("chat_template")
