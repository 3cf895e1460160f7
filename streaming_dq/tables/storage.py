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
    "hadoop_options",
    "mask",
    "merged",
    "redacted",
    "refused_option",
    "secret_values",
    "spark_uri",
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
#: S3A's per-bucket keys whose values are shown (``fs.s3a.bucket.<b>.endpoint`` ...).
_SHOWN_SUFFIXES = (
    ".endpoint",
    ".endpoint.region",
    ".path.style.access",
    ".connection.ssl.enabled",
    ".aws.credentials.provider",
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
    lowered = key.lower()
    if lowered.startswith("fs.s3a.bucket."):
        return lowered.endswith(_SHOWN_SUFFIXES)
    return lowered in SHOWN_KEYS


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


#: Delta's LogStore for S3 that commits by conditional write (:func:`streaming_dq.runtime.jvm.log_store_jar`).
S3_LOG_STORE_CLASS = "io.streamingdq.delta.S3ConditionalLogStore"


def commits_by_conditional_put(uri: str, options: Mapping[str, str], environ: Mapping[str, str]) -> bool:
    """Whether delta-rs commits to the S3 table ``uri`` by conditional write (``aws_conditional_put: etag``):
    the way :data:`S3_LOG_STORE_CLASS` commits for Spark, so both may commit to the table.

    Example:
        >>> commits_by_conditional_put("s3://lake/t", {"aws_conditional_put": "etag"}, {})
        True
    """
    if uri.split("://", 1)[0].lower() not in {"s3", "s3a"}:
        return False
    put = _setting(options, environ, "aws_conditional_put", "conditional_put")
    return put is not None and put.strip().lower() == "etag"


def spark_uri(uri: str) -> str:
    """``uri`` as Spark's Hadoop file systems name it: ``s3://`` is S3A's (``s3a://``), other URIs unchanged.

    Example:
        >>> spark_uri("s3://lake/orders"), spark_uri("s3a://lake/orders"), spark_uri("/data/orders")
        ('s3a://lake/orders', 's3a://lake/orders', '/data/orders')
    """
    scheme, sep, rest = uri.partition("://")
    return f"s3a://{rest}" if sep and scheme.lower() == "s3" else uri


#: delta-rs's S3 options and the S3A settings that mean the same, per bucket (``fs.s3a.bucket.<b>.<key>``).
_S3A = {
    "aws_endpoint_url": "endpoint",
    "aws_endpoint": "endpoint",
    "aws_access_key_id": "access.key",
    "aws_secret_access_key": "secret.key",
    "aws_session_token": "session.token",
    "aws_region": "endpoint.region",
    "aws_default_region": "endpoint.region",
}


def hadoop_options(uri: str, options: Mapping[str, str]) -> dict[str, str]:
    """The Hadoop settings for Spark that say what ``options`` (delta-rs's spelling) say for the table or
    folder ``uri``: for S3, S3A's per-bucket keys (so tables in different buckets keep their own credentials);
    ``fs.*`` keys as written. Given as DataFrame options (Delta reads ``fs.*`` ones) or as ``spark.hadoop.*``.

    Example:
        >>> hadoop_options("s3://lake/t", {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ALLOW_HTTP": "true"})
        {'fs.s3a.bucket.lake.endpoint': 'http://127.0.0.1:9000', 'fs.s3a.bucket.lake.path.style.access': 'true', 'fs.s3a.bucket.lake.connection.ssl.enabled': 'false'}
    """
    out = {k: v for k, v in options.items() if k.startswith("fs.")}
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme.lower() not in {"s3", "s3a"}:
        return out
    bucket = rest.split("/", 1)[0]
    lowered = {k.lower(): v for k, v in options.items()}
    prefix = f"fs.s3a.bucket.{bucket}."
    for key, value in lowered.items():
        if key in _S3A:
            out.setdefault(prefix + _S3A[key], value)
    if "aws_session_token" in lowered:
        provider = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
        out.setdefault(prefix + "aws.credentials.provider", provider)
    virtual = lowered.get("aws_virtual_hosted_style_request", "").lower() in {"true", "1"}
    if prefix + "endpoint" in out and not virtual:  # a custom endpoint is addressed by path
        out.setdefault(prefix + "path.style.access", "true")
    if lowered.get("aws_allow_http", "").lower() in {"true", "1"}:
        out.setdefault(prefix + "connection.ssl.enabled", "false")
    return out


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


#: The storage option a refusal points at, by the store's code (the key as delta-rs spells it, lower case).
_REFUSED_OPTION = {
    "InvalidAccessKeyId": "aws_access_key_id",
    "SignatureDoesNotMatch": "aws_secret_access_key",
    "ExpiredToken": "aws_session_token",
    "InvalidToken": "aws_session_token",
    "AuthorizationFailure": "azure_storage_account_key",
}


def refused_option(problem: str, options: Mapping[str, str]) -> str | None:
    """The key of ``options``, as written, that a :func:`store_problem` answer blames (the secret key for a
    signature the store refused ...), or None when it blames no option or the key is not among them.

    Example:
        >>> refused_option("... (SignatureDoesNotMatch) for bucket 'lake'", {"AWS_SECRET_ACCESS_KEY": "x"})
        'AWS_SECRET_ACCESS_KEY'
    """
    wanted = next((key for code, key in _REFUSED_OPTION.items() if f"({code})" in problem), None)
    return next((k for k in options if k.lower() == wanted), None) if wanted else None


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
