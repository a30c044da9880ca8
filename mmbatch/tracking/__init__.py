"""Results where labs track them: ``mmbatch export --to mlflow|wandb`` (docs/tracking.md).

:mod:`.runs` turns metrics files into tracked runs (parameters from the provenance each file records, one metric per
row of its metrics table), :mod:`.mlflow_export` and :mod:`.wandb_export` write them with the libraries' own clients,
which are optional extras imported only here (``pip install 'mmbatch[mlflow]'``, ``'mmbatch[wandb]'``).
"""
