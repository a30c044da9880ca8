"""``infer --executor ray``: the same stage, its rows run by an actor pool on a Ray cluster.

The driver (the ``mmbatch infer`` process) keeps everything the local executor does: it reads and checks the prepared
file, opens the progress journal, picks the rows left to run and plans them in chunks exactly as the local executor
does (:func:`mmbatch.infer.runner.plan_chunks`), and commits every result list as it comes back. Ray runs the middle:
CPU tasks decode each chunk's images and video frames (:mod:`~mmbatch.infer.on_ray.work`), and an actor pool, each
actor holding one backend loaded once, answers the decoded chunks (:mod:`~mmbatch.infer.on_ray.work`), streaming
results back (:mod:`~mmbatch.infer.on_ray.pipeline`). Ray itself is imported only here, only with ``--executor ray``
(:mod:`~mmbatch.infer.on_ray.options`).
"""
