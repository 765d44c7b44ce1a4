"""What the page's console keeps of a tokenize answer, as chromedriver's browser log gives it back."""

from __future__ import annotations

import json

from toolkit.payer import tokenize_hook


def logged(url: str, status: int, text: str) -> dict[str, str]:
    said = tokenize_hook.MARK + json.dumps({"url": url, "status": status, "text": text})
    return {"level": "INFO", "source": "console-api", "message": f"http://shop.test/checkout 1:2 {json.dumps(said)}"}


def test_the_answers_are_read_back_in_order_whatever_else_the_console_says():
    first = json.dumps({"hostedFieldsToken": "hf_1"})
    second = json.dumps({"code": 4004, "message": "card number: not a valid number"})
    entries = [
        {"level": "SEVERE", "source": "network", "message": "http://shop.test/favicon.ico - 404"},
        logged("http://gw.test/api/v4/tokenize/hosted-fields", 200, first),
        {"level": "INFO", "source": "console-api", "message": 'http://shop.test/app.js 3:4 "paid"'},
        logged("http://gw.test/api/v4/tokenize/hosted-fields", 400, second),
    ]
    assert tokenize_hook.answers(entries) == [
        ("http://gw.test/api/v4/tokenize/hosted-fields", 200, first),
        ("http://gw.test/api/v4/tokenize/hosted-fields", 400, second),
    ]
