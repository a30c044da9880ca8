"""The benchmark files VLMEvalKit publishes, with the MD5 it checks them against: what ``prepare`` fetches.

Read from VLMEvalKit's ``DATASET_URL`` and ``DATASET_MD5`` tables (``vlmeval/dataset/image_mcq.py``,
``image_yorn.py``, ``image_vqa.py``, ``mmmu.py``...) at commit :data:`CHECKED_AT`. A benchmark's declaration names
its files by split with :func:`vlmevalkit_sources`; a name missing here is a :class:`KeyError` when the declaration
is imported, so a typo cannot ship.
"""

from __future__ import annotations

from mmbatch.benchmarks.declaration import SourceFile

CHECKED_AT = "open-compass/VLMEvalKit@e8e78f05f3080fe28154f2130321f17951c3be94 (2026-08-18)"
"""The VLMEvalKit commit whose tables gave every URL and MD5 below."""

_HOST = "https://opencompass.openxlab.space/utils"

FILES: dict[str, tuple[str, str | None]] = {
    "MMBench_DEV_EN": (f"{_HOST}/benchmarks/MMBench/MMBench_DEV_EN.tsv", "b6caf1133a01c6bb705cf753bb527ed8"),
    "MMBench_TEST_EN": (f"{_HOST}/benchmarks/MMBench/MMBench_TEST_EN.tsv", "6939fadb0ce626fefc0bdc9c64efc528"),
    "MMBench_DEV_CN": (f"{_HOST}/benchmarks/MMBench/MMBench_DEV_CN.tsv", "08b8fc3324a5ed74155350f57be69fbd"),
    "MMBench_TEST_CN": (f"{_HOST}/benchmarks/MMBench/MMBench_TEST_CN.tsv", "7e1239baf0ee4c8b513e19705a0f317e"),
    "MMBench_DEV_EN_V11": (f"{_HOST}/benchmarks/MMBench/MMBench_DEV_EN_V11.tsv", "30c05be8f2f347a50be25aa067248184"),
    "MMBench_TEST_EN_V11": (f"{_HOST}/benchmarks/MMBench/MMBench_TEST_EN_V11.tsv",
                            "8d1a704e791df6f5d9fb3ef782b65365"),
    "MMBench_DEV_CN_V11": (f"{_HOST}/benchmarks/MMBench/MMBench_DEV_CN_V11.tsv", "593f9b5f6bea453d870a798b34ae4f37"),
    "MMBench_TEST_CN_V11": (f"{_HOST}/benchmarks/MMBench/MMBench_TEST_CN_V11.tsv",
                            "156e6569f9547afb16603eca16e85373"),
    "CCBench": (f"{_HOST}/VLMEval/CCBench.tsv", "f5dde47f24dc5a6fb6e595b409b466ac"),
    "MME": (f"{_HOST}/VLMEval/MME.tsv", "b36b43c3f09801f5d368627fb92187c3"),
    "POPE": (f"{_HOST}/VLMEval/POPE.tsv", "c12f5acb142f2ef1f85a26ba2fbe41d5"),
    "HallusionBench": (f"{_HOST}/VLMEval/HallusionBench.tsv", "0c23ac0dc9ef46832d7a24504f2a0c7c"),
    "MMStar": (f"{_HOST}/VLMEval/MMStar.tsv", "e1ecd2140806c1b1bbf54b43372efb9e"),
    "AI2D_TEST": (f"{_HOST}/VLMEval/AI2D_TEST.tsv", "0f593e0d1c7df9a3d69bf1f947e71975"),
    "AI2D_TEST_NO_MASK": (f"{_HOST}/VLMEval/AI2D_TEST_NO_MASK.tsv", "fd8f463634d4fe9fbd23b876e8eea5be"),
    "RealWorldQA": (f"{_HOST}/VLMEval/RealWorldQA.tsv", "4de008f55dc4fd008ca9e15321dc44b7"),
    "ScienceQA_VAL": (f"{_HOST}/benchmarks/ScienceQA/ScienceQA_VAL.tsv", "96320d05e142e585e7204e72affd29f3"),
    "ScienceQA_TEST": (f"{_HOST}/benchmarks/ScienceQA/ScienceQA_TEST.tsv", "e42e9e00f9c59a80d8a5db35bc32b71f"),
    # VLMEvalKit lists A-OKVQA's file without an MD5: mmbatch does not download it (docs/data.md).
    "A-OKVQA": ("https://huggingface.co/datasets/Allen8/A-OKVQA/resolve/main/a-okvqa.tsv", None),
    "MMT-Bench_VAL": (f"{_HOST}/benchmarks/MMT-Bench/MMT-Bench_VAL.tsv", "8dd4b730f53dbf9c3aed90ca31c928e0"),
    "MMT-Bench_ALL": (f"{_HOST}/benchmarks/MMT-Bench/MMT-Bench_ALL.tsv", "b273a2f4c596fe4f2605de0494cd632f"),
    "MMT-Bench_VAL_MI": (f"{_HOST}/benchmarks/MMT-Bench/MMT-Bench_VAL_MI.tsv", "c7d7b998eb5cd9aa36c7d4f721472462"),
    "MMT-Bench_ALL_MI": (f"{_HOST}/benchmarks/MMT-Bench/MMT-Bench_ALL_MI.tsv", "5272157097e19cdd7cb41e412ab3b7c7"),
    "BLINK": (f"{_HOST}/VLMEval/BLINK.tsv", "d5e8af148b10ac69f535ff7b23f3f989"),
    "TextVQA_VAL": (f"{_HOST}/VLMEval/TextVQA_VAL.tsv", "b233b31f551bbf4056f2f955da3a92cd"),
    "ChartQA_TEST": (f"{_HOST}/VLMEval/ChartQA_TEST.tsv", "c902e0aa9be5582a7aad6dcf52734b42"),
    "DocVQA_VAL": (f"{_HOST}/VLMEval/DocVQA_VAL.tsv", "d5ee77e1926ff10690d469c56b73eabf"),
    "DocVQA_TEST": (f"{_HOST}/VLMEval/DocVQA_TEST.tsv", "6a2f28cac26ef2d3447374e8c6f6c8e9"),
    "InfoVQA_VAL": (f"{_HOST}/VLMEval/InfoVQA_VAL.tsv", "2342e9c225222f0ef4dec545ebb126fe"),
    "InfoVQA_TEST": (f"{_HOST}/VLMEval/InfoVQA_TEST.tsv", "df535bf51b88dc9718252c34131a6227"),
    "OCRVQA_TEST": (f"{_HOST}/VLMEval/OCRVQA_TEST.tsv", "ca46a6d74b403e9d6c0b670f6fc00db9"),
    "OCRVQA_TESTCORE": (f"{_HOST}/VLMEval/OCRVQA_TESTCORE.tsv", "c5239fe77db8bdc1f2ad8e55e0d1fe97"),
    "GQA_TestDev_Balanced": (f"{_HOST}/VLMEval/GQA_TestDev_Balanced.tsv", "99b62f22e224d9b2f32dcbe41359d1c9"),
    "OCRBench": (f"{_HOST}/VLMEval/OCRBench.tsv", "e953d98a987cc6e26ef717b61260b778"),
    "MathVista_MINI": (f"{_HOST}/VLMEval/MathVista_MINI.tsv", "f199b98e178e5a2a20e7048f5dcb0464"),
    "MathVision": (f"{_HOST}/VLMEval/MathVision.tsv", "93f6de14f7916e598aa1b7165589831e"),
    "MathVision_MINI": (f"{_HOST}/VLMEval/MathVision_MINI.tsv", "060fe4fa5d868987ce179307bd5f8a33"),
    "MMVet": (f"{_HOST}/VLMEval/MMVet.tsv", "748aa6d4aa9d4de798306a63718455e3"),
    "LLaVABench": (f"{_HOST}/VLMEval/LLaVABench.tsv", "d382a093f749a697820d3dadd61c8428"),
    "MMMU_DEV_VAL": (f"{_HOST}/VLMEval/MMMU_DEV_VAL.tsv", "585e8ad75e73f75dcad265dfd0417d64"),
    "MMMU_TEST": (f"{_HOST}/VLMEval/MMMU_TEST.tsv", "c19875d11a2d348d07e5eb4bdf33166d"),
}
"""VLMEvalKit dataset name -> (URL, MD5 or None)."""


def vlmevalkit_sources(*splits: tuple[str, str]) -> tuple[SourceFile, ...]:
    """``(split, VLMEvalKit dataset name)`` pairs as source files, named as VLMEvalKit keeps them (the URL's last
    part: ``MMBench_DEV_EN.tsv``)."""
    found = []
    for split, name in splits:
        url, md5 = FILES[name]
        how = "" if md5 else f"VLMEvalKit publishes no MD5 for {name}: download {url} yourself and check it"
        found.append(SourceFile(split, url.rsplit("/", 1)[-1], url, md5, how))
    return tuple(found)
