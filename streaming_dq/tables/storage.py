"""Object-store options: written once in the config, handed to each client in its form, never shown.

The config spells storage options the way delta-rs (the ``object_store`` crate) reads them:
``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, ``AWS_ALLOW_HTTP``,
``aws_conditional_put``, ``AZURE_STORAGE_ACCOUNT_KEY``, ``GOOGLE_SERVICE_ACCOUNT`` ... Keys that start with
``fs.`` are Hadoop file-system options for Spark and are not given to delta-rs.

A value is shown (in ``repr``, errors, logs) only when its key is known to carry no secret (an endpoint, a
region, a commit mode); every other value is replaced by ``***``, and :func:`mask` removes any secret value
that a client's error message might repeat.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "SHOWN_KEYS",
    "delta_rs_options",
    "mask",
    "merged",
    "redacted",
    "secret_values",
    "store_problem",
    "unsafe_commit_problem",
]

#: Option keys (compared case-insensitively) whose values are shown; every other value is a secret.
SHOWN_KEYS = frozenset(
    key.lower()
    for key in (
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ALLOW_HTTP",
        "AWS_CONDITIONAL_PUT",
        "AWS_S3_LOCKING_PROVIDER",
        "DELTA_DYNAMO_TABLE_NAME",
        "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",
        "AWS_COPY_IF_NOT_EXISTS",
        "AZURE_STORAGE_ACCOUNT_NAME",
        "AZURE_STORAGE_USE_EMULATOR",
        "ALLOW_HTTP",
        "TIMEOUT",
        "CONNECT_TIMEOUT",
        "fs.s3a.endpoint",
        "fs.s3a.endpoint.region",
        "fs.s3a.path.style.access",
        "fs.s3a.connection.ssl.enabled",
    )
)
MASK = "***"


def merged(*layers: Mapping[str, str] | None) -> dict[str, str]:
    """The options of ``layers`` in order, a later layer's key replacing an earlier one's.

    Example:
        >>> merged({"AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}, None, {"AWS_REGION": "eu-west-1"})
        {'AWS_REGION': 'eu-west-1', 'AWS_ALLOW_HTTP': 'true'}
    """
    out: dict[str, str] = {}
    for layer in layers:
        out.update(layer or {})
    return out


def _shown(key: str) -> bool:
    return key.lower() in SHOWN_KEYS


def redacted(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with every value that may be a secret replaced by ``***``.

    Example:
        >>> redacted({"AWS_REGION": "us-east-1", "AWS_SECRET_ACCESS_KEY": "s3cr3t"})
        {'AWS_REGION': 'us-east-1', 'AWS_SECRET_ACCESS_KEY': '***'}
    """
    return {key: value if _shown(key) else MASK for key, value in options.items()}


def secret_values(options: Mapping[str, str]) -> list[str]:
    """The values of ``options`` that are not shown, longest first (so a longer secret is masked whole)."""
    return sorted({v for k, v in options.items() if not _shown(k) and v}, key=len, reverse=True)


def mask(text: str, *option_sets: Mapping[str, str]) -> str:
    """``text`` with every secret value of ``option_sets`` replaced by ``***``.

    Example:
        >>> mask("GET failed for key s3cr3t", {"AWS_SECRET_ACCESS_KEY": "s3cr3t"})
        'GET failed for key ***'
    """
    for options in option_sets:
        for value in secret_values(options):
            text = text.replace(value, MASK)
    return text


def delta_rs_options(options: Mapping[str, str]) -> dict[str, str] | None:
    """The options delta-rs takes (Hadoop's ``fs.*`` keys left out); None when there are none."""
    kept = {k: v for k, v in options.items() if not k.startswith(("fs.", "spark."))}
    return kept or None


def _setting(options: Mapping[str, str], environ: Mapping[str, str], *keys: str) -> str | None:
    """The value of the first of ``keys`` in ``options`` (any case), else in the environment (upper case)."""
    lowered = {k.lower(): v for k, v in options.items()}
    for key in keys:
        if key.lower() in lowered:
            return lowered[key.lower()]
    for key in keys:
        if key.upper() in environ:
            return environ[key.upper()]
    return None


def unsafe_commit_problem(uri: str, options: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    """Why delta-rs's commits to the S3 table ``uri`` would not be safe against a second writer (None when they
    are, or when ``uri`` is not on S3).

    A Delta commit is the creation of the next log file, which must fail if another writer created it first.
    S3 gives that with conditional writes (``aws_conditional_put=etag``) or with a lock (DynamoDB:
    ``AWS_S3_LOCKING_PROVIDER=dynamodb``); ``AWS_S3_ALLOW_UNSAFE_RENAME`` gives it up, and is refused.

    Example:
        >>> unsafe_commit_problem("s3://lake/t", {"aws_conditional_put": "etag"}, {}) is None
        True
    """
    if uri.split("://", 1)[0].lower() not in {"s3", "s3a"}:
        return None
    unsafe = _setting(options, environ, "AWS_S3_ALLOW_UNSAFE_RENAME", "allow_unsafe_rename")
    if unsafe is not None and unsafe.strip().lower() in {"true", "1", "yes"}:
        return (
            "AWS_S3_ALLOW_UNSAFE_RENAME lets two writers overwrite each other's commits: use "
            "aws_conditional_put: etag (a store with conditional writes) or AWS_S3_LOCKING_PROVIDER: dynamodb"
        )
    put = _setting(options, environ, "aws_conditional_put", "conditional_put")
    lock = _setting(options, environ, "AWS_S3_LOCKING_PROVIDER")
    if not put and not lock:
        return (
            "a commit on S3 is safe only with conditional writes or a lock: set storage-options "
            "aws_conditional_put: etag, or AWS_S3_LOCKING_PROVIDER: dynamodb"
        )
    return None


_CODE = re.compile(r"<Code>(\w+)</Code>")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STATUS = re.compile(r"\b([45]\d\d) [A-Z][A-Za-z ]+")
_REFUSED = {
    "InvalidAccessKeyId": "the store does not know the access key id",
    "SignatureDoesNotMatch": "the store refused the secret key (the signature does not match)",
    "AccessDenied": "the credentials have no access there",
    "ExpiredToken": "the session token has expired",
    "InvalidToken": "the session token is not valid",
}


def store_problem(uri: str, options: Mapping[str, str]) -> str | None:
    """Why delta-rs cannot use the table location ``uri`` (None when it can, whether the table exists or not).

    One request or two (a listing of the table's log): a missing bucket, refused credentials and an
    unreachable endpoint each come back as one line, with no secret in it.
    """
    from deltalake import DeltaTable

    try:
        DeltaTable.is_deltatable(uri, storage_options=delta_rs_options(options))
    except Exception as exc:  # delta-rs raises OSError for store errors, others for bad options
        text = str(exc)
        code = _CODE.search(text)
        bucket = uri.split("://", 1)[-1].split("/", 1)[0]
        if code and code.group(1) == "NoSuchBucket":
            return f"bucket {bucket!r} does not exist at that endpoint"
        if code and code.group(1) in _REFUSED:
            return f"{_REFUSED[code.group(1)]} ({code.group(1)}) for bucket {bucket!r}"
        if code:
            return f"the store answered {code.group(1)} for {uri}"
        status = _STATUS.search(text)
        if status:
            return f"the store answered {status.group(0).strip()} for {uri}"
        causes = [_ANSI.sub("", line).replace("↳", "").strip() for line in text.splitlines()]
        root = next(
            (c for c in reversed(causes) if c), type(exc).__name__
        )  # delta-rs lists causes outermost first
        return f"cannot reach {uri}: {mask(root, options)}"
    return None
