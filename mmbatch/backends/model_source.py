"""Where a model comes from, checked before any loader runs: a local folder, or a Hub id that can be had.

Without this check, a mistyped local path reached ``transformers`` as a Hub id and failed with "Repo id must be in
the form 'repo_name' or 'namespace/repo_name'", and a Hub id missing from the local cache on a machine without
network (``HF_HUB_OFFLINE`` unset) was retried by ``huggingface_hub`` for 2 min 36 s before failing. Now:

- a value that is a path (it starts with ``/``, ``./``, ``../``, ``~`` or ``.``, or has more than one ``/``) must be
  an existing folder: otherwise exit 2 naming it;
- a Hub id (``NAME`` or ``ORG/NAME``) that is neither a local folder nor in the Hugging Face cache is looked up on
  the Hub once, with a short timeout and no retries; when the Hub cannot be reached, exit 2 saying how to get the
  model onto this machine. With ``HF_HUB_OFFLINE=1`` it fails at once with the same advice.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from pathlib import Path

from mmbatch.errors import BadInputError

HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")
"""``NAME`` or ``ORG/NAME`` as the Hugging Face Hub spells repository ids."""
PROBE_TIMEOUT_S = 10.0
"""Seconds the one look-up on the Hub may take before the model counts as unreachable."""
DEFAULT_ENDPOINT = "https://huggingface.co"
_TRUE = ("1", "true", "yes", "on")


def check_model_source(model: str, *, revision: str | None = None, flag: str = "--model") -> None:
    """Refuse, before anything loads, a model that cannot be had: a path that does not exist, or a Hub id that is
    neither cached nor reachable.

    Args:
        model: the value given (a folder, or a Hub id).
        revision: the Hub revision asked for (None: the default branch).
        flag: the option that named the model, for the message.

    Raises:
        BadInputError: as above, saying what to do.
    """
    local = Path(model).expanduser()
    if looks_like_path(model):
        if not local.exists():
            raise BadInputError(f"{flag} {model}: no such folder (a local model is the folder save_pretrained wrote; "
                                "a Hub model is named ORG/NAME)")
        if not local.is_dir():
            raise BadInputError(f"{flag} {model}: is a file; give the model's folder (the one holding config.json)")
        return
    if local.is_dir() or not HUB_ID.fullmatch(model) or is_cached(model, revision):
        return
    advice = (f"download it where there is network (`huggingface-cli download {model}`) and copy the Hugging Face "
              f"cache ({hub_cache()}) here, or give {flag} a local folder")
    if offline():
        raise BadInputError(f"{flag} {model}: not in the Hugging Face cache ({hub_cache()}) and HF_HUB_OFFLINE is set; "
                            f"{advice}")
    unreachable = probe_hub(model)
    if unreachable is not None:
        raise BadInputError(f"{flag} {model}: not in the Hugging Face cache and the Hub cannot be reached "
                            f"({unreachable}); {advice}. Set HF_HUB_OFFLINE=1 on machines without network")


def looks_like_path(model: str) -> bool:
    """Whether ``model`` is written as a file system path rather than a Hub id."""
    return (model.startswith(("/", "~", ".")) or "\\" in model or model.count("/") > 1 or model.endswith("/")
            or os.path.isabs(model))


def offline() -> bool:
    """Whether the Hugging Face libraries are told to stay off the network."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_cache() -> Path:
    """The Hugging Face Hub cache folder, as ``huggingface_hub`` finds it from the environment."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def is_cached(model: str, revision: str | None) -> bool:
    """Whether the cache holds ``model`` at ``revision`` (a branch or tag through ``refs/``, or a commit)."""
    folder = hub_cache() / ("models--" + model.replace("/", "--"))
    wanted = revision or "main"
    return (folder / "refs" / wanted).is_file() or (folder / "snapshots" / wanted).is_dir()


def probe_hub(model: str) -> str | None:
    """One request for the model's page on the Hub: None when the Hub answered (even 401/404, which the loader
    then reports with its own message), else why it could not be reached."""
    endpoint = os.environ.get("HF_ENDPOINT", DEFAULT_ENDPOINT).rstrip("/")
    request = urllib.request.Request(f"{endpoint}/api/models/{model}", method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S):
            return None
    except urllib.error.HTTPError:
        return None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        return f"{endpoint}: {reason}"
