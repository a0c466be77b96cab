"""A LocalStack Lambda runtime executor for a machine without Docker.

LocalStack's own executor prepares every new function version in a container (it pulls the
runtime's image and downloads its runtime-init binary); without Docker the function goes to
state Failed and `terraform apply` of the quickstart stops there. This executor prepares
nothing, so functions, their configuration, concurrency and event source mappings are created
and read back as on AWS; it refuses to run them. The tests create the event source mappings
disabled and run the handlers with `floe run-function` instead (tests/python/test_localstack.py).
Users with Docker run LocalStack's own executor, which runs the functions' zips.
"""

from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin
from localstack.services.lambda_.invocation.runtime_executor import RuntimeExecutor


class NoDockerExecutor(RuntimeExecutor):
    def _refuse(self, *_args, **_kwargs):
        raise RuntimeError("LocalStack runs here without Docker: Lambda functions are created but never run "
                           "(run the handlers with `floe run-function`)")

    start = stop = get_address = get_endpoint_from_executor = get_runtime_endpoint = invoke = get_logs = _refuse

    @classmethod
    def prepare_version(cls, function_version) -> None:
        return None

    @classmethod
    def cleanup_version(cls, function_version) -> None:
        return None


class NoDockerExecutorPlugin(RuntimeExecutorPlugin):
    name = "floe-no-docker"

    def load(self, *args, **kwargs):
        return NoDockerExecutor
