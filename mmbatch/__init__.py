"""mmbatch: offline batch evaluation of multimodal LLMs as four resumable stages.

prepare -> infer -> extract -> score, each a function from one MMBench-style table to the next.
"""

__version__ = "0.1.0"
