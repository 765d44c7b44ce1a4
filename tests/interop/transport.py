"""How the public client libraries talk to the gateway, written in Python from reading their source.

Legacy form (what all three do): a form-encoded POST with no Accept header; any HTTP status but 200
is a transport failure; the answer is parsed as url-encoded ``key=value`` pairs and each value's
trailing newline (or all surrounding blanks) is stripped.
- PHP  [payneteasy/php-library-payneteasy-api source/PaynetEasy/PaynetEasyApi/Transport/GatewayClient.php]:
  ``http_build_query`` body, ``CURLINFO_HTTP_CODE != 200`` -> RequestException, ``parse_str``, then
  ``array_map('trim', ...)`` in Transport/Response.php.
- Ruby [payneteasy/ruby-integration-examples lib/paynet_easy/paynet_easy_api/transport/gateway_client.rb]:
  ``set_form_data``, ``HTTPOK === response`` or RequestError, ``CGI.parse`` (first value), ``.to_s.strip``
  in transport/response.rb.
- Node [PredokMiF/node-payneteasy src/pne/req.js]: ``querystring.stringify``, ``res.statusCode === 200``
  or the callback gets the error, ``querystring.parse`` then ``value.replace(/\\n$/, '')``.
JSON form: the same library asking for ``application/vnd.pay+json`` and reading the JSON body whatever
the status (no library does this today; it is how "the same calls in JSON" are run here).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode

import requests

JSON_TYPE = "application/vnd.pay+json"


class TransportFailure(Exception):
    """What the libraries raise for a non-200 answer in the legacy form (RequestException, RequestError)."""


class GatewayRefusal(Exception):
    """The gateway answered ``validation-error`` or ``error`` (the libraries' PaynetException / PaynetError)."""

    def __init__(self, answer: dict[str, str]) -> None:
        super().__init__(f"{answer.get('type')}: {answer.get('error-message', '')}")
        self.answer = answer


class ResponseRejected(Exception):
    """The library refuses an answer: wrong type, a documented field missing, another order's id."""


class LibraryValidation(Exception):
    """The library refuses to build the request (its own ValidationException), before sending."""


Strip = Callable[[str], str]


def strip_all(value: str) -> str:  # PHP trim(), Ruby strip
    return value.strip()


def strip_newline(value: str) -> str:  # Node: value.replace(/\n$/, '')
    return value[:-1] if value.endswith("\n") else value


class Transport:
    """One POST the way the libraries send it, in the legacy form or asking for JSON."""

    def __init__(self, session: requests.Session, *, json_mode: bool, strip: Strip = strip_all) -> None:
        self.session = session
        self.json_mode = json_mode
        self.strip = strip
        self.sent: list[tuple[str, list[tuple[str, str]]]] = []  # (url, pairs) of every request

    def post(self, url: str, pairs: list[tuple[str, str]]) -> dict[str, str]:
        self.sent.append((url, pairs))
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if self.json_mode:
            headers["Accept"] = JSON_TYPE
        try:
            response = self.session.post(url, data=urlencode(pairs), headers=headers, timeout=30)
        except requests.RequestException as exc:
            raise TransportFailure(f"Error occurred. {exc}") from exc
        if self.json_mode:
            return {k: "" if v is None else str(v) for k, v in json.loads(response.text).items()}
        if response.status_code != 200:
            raise TransportFailure(f"Error occurred. HTTP code: '{response.status_code}'")
        if not response.text:
            raise TransportFailure("PaynetEasy response is empty")
        return {k: self.strip(v) for k, v in parse_qsl(response.text, keep_blank_values=True)}
