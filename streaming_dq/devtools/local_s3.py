"""An S3-compatible server on 127.0.0.1 for the object-store tests and benchmarks: ``moto_server``.

Why this server: ``moto[server]`` installs from PyPI (no Docker, no binary download), runs as a separate
process that speaks the S3 HTTP API, enforces conditional writes (``If-None-Match: *``, which delta-rs's
``aws_conditional_put=etag`` commits rely on) and, with ``INITIAL_NO_AUTH_ACTION_COUNT``, checks request
signatures against the access keys of its own IAM, so wrong credentials are refused as a real store
refuses them. It keeps the objects in memory: a restart loses them (the tests start it once per session).

:func:`local_s3` starts it in a process group of its own, creates an IAM user with an access key allowed
everything, creates the buckets, yields an :class:`S3Server`, and stops the process when the block ends.

Example:
    >>> with local_s3(Path("/tmp/s3"), buckets=("lake",)) as s3:  # doctest: +SKIP
    ...     write_deltalake("s3://lake/orders", table, storage_options=s3.storage_options())
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streaming_dq.devtools.local_kafka import free_port, stop_group, wait_for_port
from streaming_dq.exceptions import LocalServerError

__all__ = ["S3Server", "local_s3"]

REGION = "us-east-1"
#: The unauthenticated calls that set the server up: create the user, its key, its policy.
_SETUP_CALLS = 3


@dataclass(frozen=True)
class S3Server:
    """A running S3-compatible server.

    Attributes:
        endpoint: ``http://127.0.0.1:<port>``.
        access_key: The access key id of the user allowed everything.
        secret_key: Its secret key.
        region: The region clients name.
        log: The server's log: one line per request (``"GET /bucket/key HTTP/1.1" 200``), for counting them.
    """

    endpoint: str
    access_key: str
    secret_key: str = field(repr=False)
    region: str = REGION
    log: Path | None = None

    def storage_options(self, **extra: str) -> dict[str, str]:
        """delta-rs storage options for this server: its endpoint, the keys, plain HTTP, and commits by
        conditional put (safe with concurrent writers)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": self.region,
            "AWS_ALLOW_HTTP": "true",
            "aws_conditional_put": "etag",
            **extra,
        }

    def client(self, service: str = "s3", **keys: str) -> Any:
        """A boto3 client of ``service`` on this server (the keys of the allowed user unless given)."""
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=self.region,
            aws_access_key_id=keys.get("access_key", self.access_key),
            aws_secret_access_key=keys.get("secret_key", self.secret_key),
        )

    def create_bucket(self, name: str) -> None:
        """Create bucket ``name`` (an S3 bucket name: 3 to 63 characters)."""
        self.client().create_bucket(Bucket=name)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every object key under ``prefix`` in ``bucket``."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]


def _moto_server() -> str:
    found = shutil.which("moto_server", path=str(Path(sys.executable).parent)) or shutil.which("moto_server")
    if found is None:
        raise LocalServerError("moto_server is not installed: `make test` installs moto[server] into .venv")
    return found


@contextmanager
def local_s3(
    workdir: Path, *, buckets: tuple[str, ...] = ("lake",), timeout: float = 60.0
) -> Iterator[S3Server]:
    """Run ``moto_server`` on a free port of 127.0.0.1 (its log under ``workdir``) with ``buckets`` created.

    Raises:
        LocalServerError: the server is not installed, exited, or did not answer within ``timeout``.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = workdir / "moto_server.log"
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(_SETUP_CALLS)}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [_moto_server(), "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    try:
        wait_for_port("moto_server", port, process, log, timeout)
        endpoint = f"http://127.0.0.1:{port}"
        setup = S3Server(endpoint, "setup", "setup")
        iam = setup.client("iam")
        iam.create_user(UserName="gate")
        key = iam.create_access_key(UserName="gate")["AccessKey"]
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        iam.put_user_policy(UserName="gate", PolicyName="everything", PolicyDocument=json.dumps(policy))
        server = S3Server(endpoint, key["AccessKeyId"], key["SecretAccessKey"], log=log)
        for bucket in buckets:
            server.create_bucket(bucket)
        yield server
    finally:
        stop_group(process)


def main(argv: list[str] | None = None) -> int:
    """``python -m streaming_dq.devtools.local_s3``: an S3 server on 127.0.0.1 for trying a gate's tables on
    a store without a cloud account; prints the settings a config needs, and runs until Ctrl-C (its objects
    live in memory and go with it)."""
    import argparse
    import tempfile
    import time

    parser = argparse.ArgumentParser(
        prog="python -m streaming_dq.devtools.local_s3", description=main.__doc__
    )
    parser.add_argument("--bucket", action="append", help="a bucket to create (repeatable; default: lake)")
    parser.add_argument("--workdir", type=Path, help="where its log goes (default: a temporary folder)")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="streaming-dq-s3-"))
    buckets = tuple(args.bucket or ["lake"])
    with local_s3(workdir, buckets=buckets) as s3:
        print(
            f"an S3 server at {s3.endpoint}, buckets {', '.join(buckets)}; in the shell that runs the gate:\n"
            f"  export DQ_S3_KEY={s3.access_key} DQ_S3_SECRET={s3.secret_key}\n"
            "and in the gate's config:\n"
            "storage-options:\n"
            f"  AWS_ENDPOINT_URL: {s3.endpoint}\n"
            f"  AWS_REGION: {s3.region}\n"
            '  AWS_ALLOW_HTTP: "true"\n'
            "  aws_conditional_put: etag\n"
            "  AWS_ACCESS_KEY_ID: ${DQ_S3_KEY}\n"
            "  AWS_SECRET_ACCESS_KEY: ${DQ_S3_SECRET}\n"
            f"(tables at s3://{buckets[0]}/...; Ctrl-C stops the server and its objects are gone)",
            flush=True,
        )
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
