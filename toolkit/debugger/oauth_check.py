"""OAuth 1.0a (spec 5.2, behaviour 8): recompute the base string and find the mistake that the signature reproduces.

The gateway builds ``POST&<URL>&<sorted, RFC 3986 encoded parameters>`` from the URL it was
called on, the decoded body and the header's oauth parameters.  Each hypothesis rebuilds the base
string as a buggy client would ('+' for spaces, an empty parameter left out, unsorted parameters,
another URL or port, ...) and checks the signature against it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from urllib.parse import quote, quote_plus, unquote, urlsplit, urlunsplit

from cryptography.hazmat.primitives.asymmetric import rsa
from oauthlib.oauth1.rfc5849 import signature as rfc5849

from toolkit.debugger.diagnosis import Diagnosis, Finding, Pairs, path_id
from toolkit.debugger.oauth_verify import NOT_OPENED, comparable, other_verifiers, verifier
from toolkit.fields import FIELDS
from toolkit.masking import mask_base_string, mask_value
from toolkit.operations import AuthScheme, Operation
from toolkit.signing import (
    OAuthParams,
    oauth_params_from_header,
    parse_authorization_header,
    signature_base_string,
)

REQUIRED = ("oauth_consumer_key", "oauth_signature_method", "oauth_signature", "oauth_timestamp", "oauth_nonce")
WINDOW = 300  # behaviour section 8 [sim]
Verify = Callable[[str, str], bool]


def _encode(value: str) -> str:
    return quote(value, safe="~")


def base_string(
    url: str,
    params: Pairs,
    *,
    method: str = "POST",
    encode: Callable[[str], str] = _encode,
    sort: bool = True,
    normalize_url: bool = True,
    encode_joined: bool = True,
) -> str:
    """RFC 5849 3.4.1 with each step switchable, to rebuild what a buggy client signed."""
    pairs = [(_encode(name), encode(value)) for name, value in params]
    if sort:
        pairs.sort()
    joined = "&".join(f"{name}={value}" for name, value in pairs)
    uri = str(rfc5849.base_string_uri(url)) if normalize_url else url
    return "&".join([_encode(method), _encode(uri), _encode(joined) if encode_joined else joined])


def _split(base: str) -> tuple[str, str, list[str]]:
    method, url, params = [*base.split("&", 2), "", ""][:3]
    return method, unquote(url), unquote(params).split("&")


def what_differs(expected: str, found: str) -> tuple[str, str, str]:
    """(part, expected, found) of the first component where two base strings differ (masked)."""
    e_method, e_url, e_params = _split(expected)
    f_method, f_url, f_params = _split(found)
    if e_method != f_method:
        return "HTTP method", e_method, f_method
    if e_url != f_url:
        return "URL", e_url, f_url
    missing = [pair for pair in e_params if pair not in f_params]
    extra = [pair for pair in f_params if pair not in e_params]
    if not missing and not extra:
        names = [unquote(pair.partition("=")[0]) for pair in e_params]
        found_names = [unquote(pair.partition("=")[0]) for pair in f_params]
        return "order", ", ".join(names), ", ".join(found_names)
    if missing:
        name = unquote(missing[0].partition("=")[0])
        twin = next((pair for pair in extra if unquote(pair.partition("=")[0]) == name), None)
        return name, _shown(missing[0]), _shown(twin) if twin else "(absent)"
    return unquote(extra[0].partition("=")[0]), "(absent)", _shown(extra[0])


def _shown(pair: str) -> str:
    """``name=value`` as in the base string; a card field's value decoded and masked."""
    name, eq, value = pair.partition("=")
    field = unquote(name)
    secret = field in FIELDS and FIELDS[field].secret
    return f"{name}{eq}{mask_value(field, unquote(value)) if secret else value}"


def _url_variants(url: str, op: Operation, group_id: str | None) -> Iterator[tuple[str, bool, str]]:
    """(url, normalize, why) of addresses a client may have signed instead of the one called."""
    parts = urlsplit(url)
    scheme, host, port = parts.scheme, parts.hostname or "", parts.port
    default = 443 if scheme == "https" else 80
    here = port or default
    why = f"the signed URL must be the one called ({scheme}://{parts.netloc}); "
    yield urlunsplit((scheme, f"{host}:{default}", parts.path, "", "")), False, why + "default ports are omitted"
    for other in sorted({80, 443, 8080, 8443, 9090} - {here}):
        yield urlunsplit((scheme, f"{host}:{other}", parts.path, "", "")), True, why + f"not port {other}"
    swapped = "http" if scheme == "https" else "https"
    yield urlunsplit((swapped, parts.netloc, parts.path, "", "")), True, why + f"not {swapped}"
    for alias in {"localhost": "127.0.0.1", "127.0.0.1": "localhost"}.get(host, ""), host.upper():
        if alias and alias != host:
            yield urlunsplit((scheme, parts.netloc.replace(host, alias), parts.path, "", "")), True, why + "host"
    path = parts.path.removeprefix("/paynet") if parts.path.startswith("/paynet/") else "/paynet" + parts.path
    yield urlunsplit((scheme, parts.netloc, path, "", "")), True, why + "with the base URL's path prefix"
    yield urlunsplit((scheme, parts.netloc, parts.path + "/", "", "")), True, why + "without a trailing slash"
    found = path_id(url)
    if group_id and op.group and found and not found[1]:
        grouped = parts.path.rsplit("/", 1)[0] + f"/group/{group_id}"
        yield urlunsplit((scheme, parts.netloc, grouped, "", "")), True, why + "addressed by endpoint, not group"


def _candidates(
    op: Operation, pairs: Pairs, raw: str | None, oauth: OAuthParams, url: str, group_id: str | None, realm: str | None
) -> Iterator[tuple[Finding, str]]:
    """(what the client did, the base string it signed); ``what_differs`` names the component."""
    signed = [*pairs, *oauth.pairs()]
    rfc = "RFC 3986 encoding writes a space as %20, never + (spec 5.2 rule 3)"
    if any(" " in value for _, value in pairs):
        yield Finding("encoding of spaces", "%20", "+", rfc), base_string(url, signed, encode=quote_plus)
    if raw is not None:
        as_sent = [tuple(item.partition("=")[::2]) for item in raw.strip().split("&") if item]
        text_pairs = [(unquote(name), value) for name, value in as_sent]
        why = "the gateway signs the decoded values; the client signed their form-encoded text"
        yield (
            Finding("encoding of the values", "decoded values", "encoded text", why),
            base_string(url, [*text_pairs, *oauth.pairs()]),
        )
    empties = [name for name, value in pairs if value == ""]
    why = "an empty parameter still takes part in the base string (behaviour 8)"
    for left_out in [*([name] for name in empties), *([empties] if len(empties) > 1 else [])]:
        kept = [(n, v) for n, v in pairs if n not in left_out]
        yield Finding("empty parameter", "included", "left out", why), base_string(url, [*kept, *oauth.pairs()])
    sent_names = {name for name, _ in pairs}
    for name in (n for n in op.fields if n not in sent_names):
        why = f"the signature covers {name}= but the body does not carry it: sign exactly what is sent"
        yield Finding(name, "(not sent, not signed)", f"{name}=", why), base_string(url, [*signed, (name, "")])
    why = "parameters are sorted by name before joining (spec 5.2 rule 3)"
    yield Finding("order of the parameters", "sorted", "as sent", why), base_string(url, signed, sort=False)
    yield (
        Finding("order of the parameters", "sorted", "oauth first", why),
        base_string(url, [*oauth.pairs(), *pairs], sort=False),
    )
    why = "every body parameter takes part in the base string (spec 5.2 rule 3)"
    yield Finding("body parameters", "signed", "left out", why), base_string(url, oauth.pairs())
    if realm is not None:
        why = "realm is not a signed parameter (RFC 5849 3.4.1.3.1)"
        yield Finding("realm", "(not signed)", "signed", why), base_string(url, [*signed, ("realm", realm)])
    why = "each of the three parts is percent-encoded once more (RFC 5849 3.4.1)"
    yield (
        Finding("encoding of the parameter string", "encoded", "not encoded", why),
        base_string(url, signed, encode_joined=False),
    )
    yield Finding("HTTP method", "POST", "post", "the method is upper case"), base_string(url, signed, method="post")
    for variant, normalize, reason in _url_variants(url, op, group_id):
        found = Finding("URL", str(rfc5849.base_string_uri(url)), variant, reason)
        yield found, base_string(variant, signed, normalize_url=normalize)


def _header_findings(op: Operation, params: dict[str, str], login: str, now: float | None) -> list[Finding]:
    findings = [Finding(n, "a value", "(missing)", "every oauth parameter is required (spec 5.2)") for n in REQUIRED]
    findings = [f for f in findings if not params.get(f.part)]
    method = params.get("oauth_signature_method", "")
    if method and op.oauth_scheme(method) is None:
        expected = " or ".join(op.schemes)
        why = f"{op.name} is signed with {expected}; the gateway refuses another signature method (spec 5.2)"
        findings.append(Finding("oauth_signature_method", expected, method, why))
    if params.get("oauth_consumer_key", login) != login:
        why = "the consumer key is the merchant login (spec 5.2)"
        findings.append(Finding("oauth_consumer_key", login, params["oauth_consumer_key"], why))
    if params.get("oauth_version", "1.0") != "1.0":
        findings.append(Finding("oauth_version", "1.0", params["oauth_version"], "spec 5.2"))
    stamp = params.get("oauth_timestamp", "")
    if now is not None and stamp.isdigit() and abs(int(stamp) - now) > WINDOW:
        why = f"{abs(int(stamp) - now):.0f} s from now; the gateway allows {WINDOW} s either side (behaviour 8)"
        findings.append(Finding("oauth_timestamp", f"within {WINDOW} s of {now:.0f}", stamp, why))
    return findings


def diagnose_oauth(
    op: Operation,
    pairs: Pairs,
    raw: str | None,
    *,
    authorization: str | None,
    url: str,
    login: str,
    key: str,
    public_key: rsa.RSAPublicKey | None,
    group_id: str | None,
    now: float | None,
) -> Diagnosis:
    scheme = " or ".join(op.schemes)
    formula = "POST & URL & sorted RFC 3986 parameters (body + oauth_*), each part encoded once (spec 5.2 rule 3)"
    why_header = "oauth_* parameters belong in the Authorization header, not in the body (spec 5.2 rule 1)"
    in_body = [Finding(n, "(in the header)", "in the body", why_header) for n, _ in pairs if n.startswith("oauth_")]
    if not authorization:
        finding = Finding("Authorization header", 'OAuth oauth_consumer_key="...", ...', "(missing)", "spec 5.2")
        return Diagnosis(op.name, scheme, False, "no Authorization header", formula, findings=(*in_body, finding))
    try:
        params = parse_authorization_header(authorization)
    except ValueError as exc:
        finding = Finding("Authorization header", 'OAuth name="value", ...', "malformed", str(exc))
        return Diagnosis(op.name, scheme, False, f"the header cannot be read: {exc}", formula, findings=(finding,))
    findings = in_body + _header_findings(op, params, login, now)
    missing = [f.part for f in findings if f.found == "(missing)"]
    if missing:
        verdict = f"incomplete header: {', '.join(missing)} missing (every oauth parameter is required, spec 5.2)"
        return Diagnosis(op.name, scheme, False, verdict, formula, findings=tuple(findings))
    method = params["oauth_signature_method"]
    auth = op.oauth_scheme(method)
    if auth is None:  # (no key can make the gateway take another method: said as such, nothing verified)
        verdict = f"signature method mismatch: {op.name} is signed with {scheme}, not {method}"
        return Diagnosis(op.name, scheme, False, verdict, formula, findings=tuple(findings))
    scheme = auth.value
    params.setdefault("oauth_version", "1.0")
    oauth = oauth_params_from_header(params)
    expected = signature_base_string("POST", url, pairs, oauth)
    signature = params["oauth_signature"]
    shown = (("URL", str(rfc5849.base_string_uri(url))), *((n, mask_value(n, v)) for n, v in pairs))

    compared, expected_value, sent_value = comparable(auth, expected, signature, key, public_key)

    def result(ok: bool, verdict: str, more: list[Finding], notes: tuple[str, ...] = ()) -> Diagnosis:
        masked = mask_base_string(expected)
        everything = (*findings, *more)
        return Diagnosis(
            op.name,
            scheme,
            ok,
            verdict,
            formula,
            shown,
            expected_value,
            sent_value,
            everything,
            notes,
            compared,
            masked,
        )

    verify = verifier(auth, key, public_key)
    if verify is None:
        return result(False, "cannot check an RSA-SHA256 signature without the public key", [], ("give public_key=",))
    if verify(expected, signature):
        return result(not findings, "the signature verifies" + ("" if not findings else ", but see below"), [])
    if signature != unquote(signature) and verify(expected, unquote(signature)):
        why = "header values are percent-encoded once (spec 5.2 rule 1); this one was encoded twice"
        return result(
            False, "oauth_signature is encoded twice", [Finding("oauth_signature", "encoded once", "twice", why)]
        )
    realm = params.get("realm")
    for hypothesis, text in _candidates(op, pairs, raw, oauth, url, group_id, realm):
        if verify(text, signature):
            part, want, got = what_differs(expected, text)
            named = (
                hypothesis.part if part in (hypothesis.part, "base string", "order") else f"{hypothesis.part} ({part})"
            )
            detail = Finding(named, want, got, hypothesis.why)
            return result(False, f"signature mismatch: {detail.part} — {detail.why}", [detail])
    for hypothesis, check in other_verifiers(auth, key, public_key):
        if check(expected, signature):
            return result(False, f"signature mismatch: {hypothesis.part} — {hypothesis.why}", [hypothesis])
    return result(False, *_unexplained(auth, sent_value))


def _unexplained(auth: AuthScheme, opened: str) -> tuple[str, list[Finding]]:
    """No mistake reproduces the signature: an RSA signature that opens was made with the merchant's key pair
    over other content (the body changed after signing); otherwise the key is the suspect."""
    if auth is AuthScheme.OAUTH_RSA_SHA256 and opened != NOT_OPENED:
        why = (
            "the signature opens with the merchant's public key, so the key pair is right, but it carries the "
            "SHA-256 digest of another base string: the body was changed after it was signed (sign last, exactly "
            "what is sent)"
        )
        finding = Finding("body", "the body that was signed", "another body", why)
        return "signature mismatch: the body was changed after signing (the key pair is right)", [finding]
    if auth is AuthScheme.OAUTH_RSA_SHA256:
        why = (
            "the signature does not open with the merchant's public key: it was made with another private key "
            "(the gateway verifies with the public key it holds for the merchant)"
        )
        return "signature mismatch: most likely the RSA key pair", [
            Finding("key", "the RSA key pair", "another key", why)
        ]
    why = (
        "no single mistake in the base string reproduces the signature: check the control key, or whether the body "
        "changed after signing (HMAC cannot tell them apart); the expected base string is shown to compare"
    )
    return "signature mismatch: most likely the control key", [Finding("key", "the control key", "another key?", why)]
