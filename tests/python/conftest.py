"""Keeps each Terraform deployment's tests on one pytest-xdist worker, and the Spark tests on one.

`make test` runs test_infra.py on several workers (`-n 4 --dist loadgroup`): the Terraform
applies against moto spend most of their time in the AWS provider's waits (an SQS queue ~25 s,
a bucket's lifecycle configuration ~55 s), so the deployments run side by side. The tests that share one deployment (the module-scoped
`deployed` fixture, one per catalog) are grouped, so each deployment is applied and destroyed
once, on one worker; every other test goes to whichever worker is free. The Spark tests
(test_spark_*.py, one Spark session per module) form one group too: one JVM at a time, on the CPU
the deployments' waits leave idle.
"""

import pytest


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "deployed" in callspec.params:
            item.add_marker(pytest.mark.xdist_group(f"deployed-{callspec.params['deployed']}"))
        elif getattr(item, "module", None) is not None and item.module.__name__.startswith("test_spark_"):
            item.add_marker(pytest.mark.xdist_group("spark"))
