"""Control checksums (spec 5.1): recompute the control and find the one mistake that reproduces the sent one.

Each hypothesis rebuilds the SHA-1 input as a buggy client would (amount in major units, parts
in another order, another id, a part left out or added, the formula of another operation,
untrimmed or form-encoded values, a key with a trailing newline) or digests it another way.
A part of the formula the body lacks while a near miss of its name was sent (``ammount``) is said first:
the client signed the value it meant, the gateway reads no such field and computes the control without it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from urllib.parse import quote, quote_plus

from toolkit.debugger.diagnosis import Diagnosis, Finding, Pairs, path_id
from toolkit.display.views import KEY_PLACEHOLDER
from toolkit.masking import mask_value
from toolkit.money import MoneyError, currency_exponent
from toolkit.operations import ENDPOINT_ID, LOGIN, OPERATIONS, ControlFormula, Operation
from toolkit.signing import control_checksum, control_parts
from toolkit.validation import meant_field, request_problems

KEY = KEY_PLACEHOLDER
_MAX_PERMUTED = 7  # 5040 orders at most
_NEAR = 1000  # endpoint ids tried either side of the one in the path
_SHA1_HEX = re.compile(r"[0-9a-fA-F]{40}")
Candidate = tuple[Finding, str]  # what the client did, and the SHA-1 input it used


def _amount_variants(raw: str, currency: str, expected: str) -> Iterator[tuple[str, str]]:
    """(value, how) of the amount parts that buggy clients compute."""
    try:
        number = Decimal(raw)
        exponent = currency_exponent(currency)
    except (InvalidOperation, MoneyError):
        return
    seen = {expected}
    variants = [
        (raw, "the amount in major units as sent; the control takes minor units (10.42 -> 1042, spec 2.2)"),
        (str(int(float(raw) * 10**exponent)), "minor units computed through float lose a cent; use Decimal"),
        (str(number * 10**exponent), "minor units written as a decimal number; the control takes an integer"),
        (raw.replace(".", ""), f"the dot removed from {raw}; minor units need {exponent} decimals first"),
        (str(int(number * 100)), f"amount times 100, but {currency} has {exponent} decimals"),
    ]
    for value, why in variants:
        if value not in seen:
            seen.add(value)
            yield value, why


def _candidates(
    op: Operation, fields: dict[str, str], raw: dict[str, str], parts: Pairs, the_id: str, ids: set[str], login: str
) -> Iterator[Candidate]:
    names = [name for name, _ in parts]
    values = [value for _, value in parts]

    def replaced(index: int, value: str) -> list[str]:
        return [*values[:index], value, *values[index + 1 :]]

    if "amount" in names and fields.get("amount"):
        at = names.index("amount")
        for value, why in _amount_variants(fields["amount"], fields.get("currency", ""), values[at]):
            yield Finding("amount", values[at], value, why), "".join(replaced(at, value))
    if ENDPOINT_ID in names:
        at = names.index(ENDPOINT_ID)
        for other in sorted(ids - {the_id}):
            why = f"the control must use the id in the request path ({the_id}), not {other} (behaviour 1)"
            yield Finding(ENDPOINT_ID, the_id, other, why), "".join(replaced(at, other))
        why = f"{op.name} starts with the endpoint id; login starts the follow-up formulas"
        yield Finding(ENDPOINT_ID, the_id, login, why), "".join(replaced(at, login))
    if LOGIN in names:
        at = names.index(LOGIN)
        for other in sorted(ids):
            why = f"{op.name} starts with the merchant login; the endpoint id starts sale, preauth and verification"
            yield Finding(LOGIN, login, other, why), "".join(replaced(at, other))
    if len(values) <= _MAX_PERMUTED:
        for order in itertools.permutations(range(len(values))):
            if list(order) != sorted(order):
                found = " + ".join(names[i] for i in order)
                why = "the parts are concatenated in the formula's order (spec 4)"
                yield Finding("order of the parts", " + ".join(names), found, why), "".join(values[i] for i in order)
    for at, name in enumerate(names):
        if values[at]:
            why = f"{name} is part of the {op.name} formula"
            yield Finding(name, values[at], "(left out)", why), "".join(values[:at] + values[at + 1 :])
    for extra in (name for name in fields if name not in names):
        for at in range(len(values) + 1):
            why = f"the {op.name} formula has no {extra}"
            found = mask_value(extra, fields[extra])
            yield (
                Finding(extra, "(not in the formula)", found, why),
                "".join([*values[:at], fields[extra], *values[at:]]),
            )
    for name, value in raw.items():
        if name in names and value != value.strip():
            why = "the gateway trims blanks (behaviour 1) and so does the control; trim before signing"
            yield Finding(name, value.strip(), value, why), "".join(replaced(names.index(name), value))
    for encode, how in ((quote_plus, "form-encoded"), (lambda v: quote(v, safe=""), "percent-encoded")):
        encoded = [encode(v) for v in values]
        if encoded != values:
            why = "the parts are the field values, not their encoded text"
            yield Finding("encoding of the parts", "decoded values", f"{how} values", why), "".join(encoded)


def _other_formulas(op: Operation, fields: dict[str, str], the_id: str, login: str) -> Iterator[Candidate]:
    users: dict[ControlFormula, list[str]] = {}
    for other in OPERATIONS.values():
        if other.control is not None and other.control != op.control:
            users.setdefault(other.control, []).append(other.name)
    assert op.control is not None
    for formula, names in users.items():
        parts = control_parts(formula, fields, endpoint_id=the_id, login=login, strict=False)
        why = f"that is the formula of {', '.join(names)}; {op.name} uses {op.control.text}"
        yield Finding("formula", op.control.text, formula.text, why), "".join(v for _, v in parts)


def _key_variants(key: str) -> Iterator[tuple[str, str]]:
    yield key + "\n", "the key followed by a newline (read from a file?)"
    yield key + " ", "the key followed by a blank"
    if key != key.strip():
        yield key.strip(), "the key without its blanks"
    if key != key.lower():
        yield key.lower(), "the key in lower case"
    if key != key.upper():
        yield key.upper(), "the key in upper case"


def _digest_variants(text: str, key: str) -> Iterator[tuple[str, str, str]]:
    """(digest, found, why) of the right input digested the wrong way."""
    data = (text + key).encode()
    yield hashlib.sha256(data).hexdigest(), "SHA-256", "the control is SHA-1 (spec 5.1)"
    yield hashlib.md5(data).hexdigest(), "MD5", "the control is SHA-1 (spec 5.1)"
    yield base64.b64encode(hashlib.sha1(data).digest()).decode(), "Base64", "the digest is written in lower-case hex"
    hmac_hex = hmac.new(key.encode(), text.encode(), hashlib.sha1).hexdigest()
    yield hmac_hex, "HMAC-SHA1 keyed with the key", "the control is SHA-1 of the parts followed by the key, not an HMAC"


def explain(
    op: Operation, fields: dict[str, str], raw: dict[str, str], parts: Pairs, the_id: str, ids: set[str], login: str,
    key: str, sent: str,
) -> list[Finding]:  # fmt: skip
    """The findings whose input reproduces ``sent`` (usually exactly one)."""
    target = sent.strip()
    matches: list[Finding] = []
    text = "".join(value for _, value in parts)
    for finding, candidate in itertools.chain(
        _candidates(op, fields, raw, parts, the_id, ids, login), _other_formulas(op, fields, the_id, login)
    ):
        if control_checksum([candidate], key) == target.lower() and finding not in matches:
            matches.append(finding)
    for variant, how in _key_variants(key):
        if control_checksum([text], variant) == target.lower():
            matches.append(Finding("merchant_control_key", KEY, f"{KEY}: {how}", "the key is used exactly as issued"))
    for digest, found, why in _digest_variants(text, key):
        if digest in (target, target.lower()):
            matches.append(Finding("digest", "SHA-1, lower-case hex", found, why))
    if control_checksum([key, text], "") == target.lower():
        matches.append(Finding("position of the key", "last", "first", "the merchant control key comes last (spec 4)"))
    if not matches and ENDPOINT_ID in (name for name, _ in parts):
        matches += _search_endpoint_ids(parts, the_id, key, target.lower())
    return matches


def _search_endpoint_ids(parts: Pairs, the_id: str, key: str, target: str) -> list[Finding]:
    """Another endpoint id in the control: ids near this one, and every id below 10000 (ids are not secret)."""
    at = [name for name, _ in parts].index(ENDPOINT_ID)
    before = "".join(value for _, value in parts[:at])
    after = "".join(value for _, value in parts[at + 1 :])
    near = range(max(0, int(the_id) - _NEAR), int(the_id) + _NEAR) if the_id.isdigit() else range(0)
    for candidate in itertools.chain(near, range(10000)):
        if str(candidate) != the_id and control_checksum([before, str(candidate), after], key) == target:
            why = f"the control must use the id in the request path ({the_id}), not {candidate} (behaviour 1)"
            return [Finding(ENDPOINT_ID, the_id, str(candidate), why)]
    return []


def _misspelled(
    op: Operation, fields: dict[str, str], raw: dict[str, str], respelled: dict[str, str], the_id: str, ids: set[str],
    login: str, key: str, sent: str,
) -> tuple[str, list[Finding]]:  # fmt: skip
    """The verdict when parts of the formula were sent under near-miss names (``respelled``: part -> name sent),
    and what the control was computed with once they are spelled right."""
    assert op.control is not None
    findings = [Finding(right, right, wrong, f"{wrong} was sent for {right}: the gateway reads no {wrong}")
                for right, wrong in respelled.items()]  # fmt: skip
    spelled = {name: value for name, value in fields.items() if name not in respelled.values()}
    spelled |= {right: fields[wrong] for right, wrong in respelled.items()}
    parts = control_parts(op.control, spelled, endpoint_id=the_id, login=login, strict=False)
    part, name = next(iter(respelled.items()))
    said = f"control mismatch: {part} — {name} was sent for {part}"
    if control_checksum([value for _, value in parts], key) == sent.lower():
        return (
            f"{said}: the control was computed with it as {part}, and the gateway reads no {name} (spell it {part})",
            findings,
        )
    more = explain(op, spelled, raw, parts, the_id, ids, login, key, sent)  # (and another mistake beside it?)
    if more:
        said += f": the gateway reads no {name} (spell it {part}); and {more[0].part}: {more[0].why}"
        return said, [*findings, *more]
    return f"{said}: the gateway reads no {name}, and computes the control without {part}", findings


def diagnose_control(
    op: Operation, pairs: Pairs, *, endpoint_id: str | None, group_id: str | None, url: str | None, login: str, key: str
) -> Diagnosis:
    formula = op.control
    assert formula is not None
    notes: list[str] = []
    raw: dict[str, str] = {}
    for name, value in pairs:
        if name in raw:
            notes.append(f"{name} is sent more than once; the gateway refuses repeated fields")
        raw.setdefault(name, value)
    fields = {name: value.strip() for name, value in raw.items() if name != "control"}
    sent = raw.get("control", "").strip()
    found_id = path_id(url) if url else None
    the_id = found_id[0] if found_id else (endpoint_id or group_id or "")
    if found_id and endpoint_id and not found_id[1] and found_id[0] != endpoint_id:
        notes.append(f"the URL addresses endpoint {found_id[0]}, not the merchant's endpoint {endpoint_id}")
    if ENDPOINT_ID in formula.parts and not the_id:
        raise ValueError(f"{op.name}'s control starts with the endpoint id: give endpoint_id=... or url=...")
    parts = control_parts(formula, fields, endpoint_id=the_id, login=login, strict=False)
    expected = control_checksum([value for _, value in parts], key)
    problems = [p for p in request_problems(op, fields) if p.field != "control"]
    required = [p.field for p in problems if "is required" in p.rule]
    if required:
        notes.append(f"the body lacks {', '.join(required)}: the gateway refuses it before checking the control")
    notes += [str(p) for p in problems if p.field not in required]
    shown = (*((name, mask_value(name, value)) for name, value in parts), ("merchant_control_key", KEY))

    def result(ok: bool, verdict: str, findings: list[Finding]) -> Diagnosis:
        return Diagnosis(
            op.name, "control", ok, verdict, formula.text, shown, expected, sent, tuple(findings), tuple(notes)
        )

    missing = [p for p in formula.parts if p not in (ENDPOINT_ID, LOGIN, *formula.optional) and not fields.get(p)]
    absent = [Finding(name, "a value", "(missing)", f"{name} is part of the {op.name} formula") for name in missing]
    if not sent:
        finding = Finding("control", expected, "(missing)", f"{op.name} carries control = {formula.text} (spec 5.1)")
        return result(False, "no control in the body", [finding, *absent])
    if sent.lower() == expected:
        if sent != expected:
            notes.append("control is upper-case hex; the gateway family writes SHA-1 digests in lower case")
        return result(not absent, f"the control verifies: {formula.text}", absent)
    ids = {i for i in (endpoint_id, group_id, found_id[0] if found_id else None) if i}
    respelled = {part: name for name in fields if not op.knows(name) and (part := meant_field(op, name)) in missing}
    if respelled:
        verdict, findings = _misspelled(op, fields, raw, respelled, the_id, ids, login, key, sent)
        return result(False, verdict, [*(f for f in absent if f.part not in respelled), *findings])
    findings = explain(op, fields, raw, parts, the_id, ids, login, key, sent)
    if findings:
        return result(False, f"control mismatch: {findings[0].part} — {findings[0].why}", [*absent, *findings])
    if not _SHA1_HEX.fullmatch(sent):
        why = f"control is SHA-1 in hex: 40 digits 0-9 and a-f (spec 5.1); {len(sent)} characters were sent"
        finding = Finding("control", expected, sent, why)
        return result(False, "the control sent is not a SHA-1 digest", [finding, *absent])
    why = (
        "no single mistake in the parts reproduces the control sent, and the parts the gateway uses are "
        "listed above: the control was most likely computed with another key (a production key on the "
        "sandbox, another merchant's key), or more than one part is wrong"
    )
    finding = Finding("merchant_control_key", "this merchant's control key", "another key?", why)
    return result(False, "control mismatch: most likely the wrong control key", [*absent, finding])
