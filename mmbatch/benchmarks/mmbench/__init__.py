"""MMBench, CCBench and any MMBench-style multiple-choice file.

``read`` reads the VLMEvalKit files (the ``READER`` of ``--benchmark mmbench``/``ccbench``), ``checks`` holds the row
checks every MCQ file must pass, ``circular`` the CircularEval group keys and generated copies, ``images`` and
``image_header`` the cheap checks of base64 images, ``media_paths`` the checks of ``image_path`` files, ``score``
the CircularEval scoring.
"""
