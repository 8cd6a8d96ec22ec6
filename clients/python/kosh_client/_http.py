# The transport of the generated client: urllib from the standard library, JSON in and out.
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, List, Mapping, Optional


def _quote(value: Any) -> str:
    return urllib.parse.quote(str(value), safe="")


class KoshError(Exception):
    """A refusal in Kosh's error envelope: `status`, `code`, `message`, `reason`, `details`, `request_id`."""

    def __init__(self, status: int, error: Mapping[str, Any]):
        self.status = status
        self.code: str = str(error.get("code", "error"))
        self.message: str = str(error.get("message", ""))
        self.reason: Optional[str] = error.get("reason")
        self.details: List[Dict[str, str]] = list(error.get("details") or [])
        self.request_id: Optional[str] = error.get("request_id")
        super().__init__(f"{status} {self.code}: {self.message}")


class Transport:
    def __init__(self, base_url: str, api_key: Optional[str] = None, *, timeout: float = 30.0, headers: Optional[Mapping[str, str]] = None):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.headers = dict(headers or {})

    def _request(self, method: str, path: str, *, query: Optional[Mapping[str, Any]] = None, body: Any = None,
                 idempotency_key: Optional[str] = None, expect: str = "json") -> Any:
        url = self.base_url + path
        pairs = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
        if pairs:
            url += "?" + urllib.parse.urlencode(pairs)
        headers = {"accept": "application/json", "user-agent": "kosh-python-client", **self.headers}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        if method not in ("GET", "HEAD"):
            # Every write is idempotent: a retry of the same call with the same key is answered once.
            headers["idempotency-key"] = idempotency_key or str(uuid.uuid4())
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
                if expect == "bytes":
                    return raw
                if expect == "text":
                    return raw.decode("utf-8")
                return json.loads(raw) if raw else None
        except urllib.error.HTTPError as refusal:
            raw = refusal.read()
            try:
                envelope = json.loads(raw)
            except ValueError:
                envelope = {}
            error = envelope.get("error") if isinstance(envelope, dict) else None
            raise KoshError(refusal.code, error if isinstance(error, dict) else {"message": raw.decode("utf-8", "replace")}) from None


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
