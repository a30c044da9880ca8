"""Server URLs as the clients resolve them and as they may be recorded: light, so that a stage records its judge's or
server's address without importing the HTTP client (~35 ms of every ``extract`` that asks no judge)."""

from __future__ import annotations

import os
import re

from mmbatch.secret_values import register_secret

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
"""Used when no base URL is given (nor ``OPENAI_BASE_URL`` set)."""


def resolved_base_url(base_url: str | None) -> str:
    """The server a client reaches: ``base_url``, else ``OPENAI_BASE_URL``, else the official API."""
    return (base_url or os.environ.get("OPENAI_BASE_URL") or OFFICIAL_BASE_URL).rstrip("/")


def without_credentials(url: str) -> str:
    """``url`` as it may be recorded or printed: without the ``user:password@`` a server URL may carry.

    The password is also registered as a secret, so that a server echoing it back is scrubbed like a key.
    """
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
        password = parts.password
    except ValueError:  # unparsable (the caller refuses it): still cut anything before an '@' after the scheme
        return re.sub(r"//[^/?#]*@", "//", url)
    if "@" not in parts.netloc:
        return url
    register_secret(password)
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=host))
