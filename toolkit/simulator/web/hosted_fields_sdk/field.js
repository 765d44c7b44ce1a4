/* gatekit simulator: the inside of one Hosted Fields card field (hosted-fields.md section 5).
 *
 * It speaks with the SDK in the merchant's page over postMessage, {hf: true, id, type, ...}, and with nothing else:
 *   to the page:   ready, focus, blur, input {filled}, value {value, request} (the answer to a collect)
 *   from the page: style {style, colorScheme}, collect {request}
 * Only messages from the parent window are read; the SDK checks this origin on its side.  The rules (the style
 * allowlist) are toolkit/simulator/web/hosted_fields_pages.py's, written in below as the file is served.
 * Plain ES5, no inline anything: the document is served under "script-src 'self'; style-src 'self'".
 */
(function () {
  'use strict';

  var RULES = /*HF_RULES*/ {};
  var PLACEHOLDER_PROPERTY = {
    color: '--hf-placeholder-color',
    fontStyle: '--hf-placeholder-font-style',
    fontWeight: '--hf-placeholder-font-weight',
    letterSpacing: '--hf-placeholder-letter-spacing'
  };
  var FORBIDDEN = new RegExp(RULES.forbidden, 'i');

  var input = document.getElementById('value');
  var id = input.getAttribute('data-hf-id');
  var type = input.getAttribute('data-hf-type');
  var style = { input: {}, focus: {}, placeholder: {} };
  var focused = false;

  function send(message) {
    message.hf = true;
    message.id = id;
    window.parent.postMessage(message, '*');
  }

  /* --- what the payer types --------------------------------------------------------------------------------- */

  function digits(text) {
    return text.replace(/\D/g, '');
  }

  function groups(number) {
    var sizes = /^3[47]/.test(number) ? [4, 6, 5] : [4, 4, 4, 4, 3];
    var out = [];
    var at = 0;
    for (var i = 0; i < sizes.length && at < number.length; i++) {
      out.push(number.slice(at, at + sizes[i]));
      at += sizes[i];
    }
    return out.join(' ');
  }

  function expiry(text) {
    var long = /^\s*(\d{1,2})\s*\/\s*\d{2}(\d{2})\s*$/.exec(text); // MM/YYYY, pasted
    var d = long ? (long[1].length === 1 ? '0' : '') + long[1] + long[2] : digits(text).slice(0, 4);
    if (d.length === 1 && d > '1') {
      d = '0' + d;
    }
    return d.length <= 2 ? d : d.slice(0, 2) + '/' + d.slice(2);
  }

  var FORMAT = {
    pan: function (text) { return groups(digits(text).slice(0, 19)); },
    exp: expiry,
    cvv: function (text) { return digits(text).slice(0, 4); }
  };

  /* The value as the tokenize call takes it: the number without its spaces, the expiry as shown (MM/YY). */
  function collected() {
    return type === 'exp' ? input.value : digits(input.value);
  }

  /* Reformat in place: the caret stays at the end, or after the same number of digits. */
  function reformat() {
    var caret = input.selectionStart === null ? input.value.length : input.selectionStart;
    var before = digits(input.value.slice(0, caret)).length;
    var shown = FORMAT[type](input.value);
    if (shown === input.value) {
      return;
    }
    var atEnd = caret >= input.value.length;
    input.value = shown;
    if (atEnd) {
      return; // (assigning the value put the caret at the end)
    }
    var at = 0;
    for (var seen = 0; at < shown.length && seen < before; at++) {
      if (/\d/.test(shown.charAt(at))) {
        seen++;
      }
    }
    input.setSelectionRange(at, at);
  }

  /* --- the merchant's style bag ------------------------------------------------------------------------------ */

  function allowed(part, bag) {
    var out = {};
    var names = RULES.allowed[part] || [];
    if (!bag || typeof bag !== 'object') {
      return out;
    }
    for (var i = 0; i < names.length; i++) {
      var value = bag[names[i]];
      if (typeof value === 'number' && isFinite(value)) {
        value = String(value);
      }
      if (typeof value === 'string' && value.length <= RULES.maxLength && !FORBIDDEN.test(value)) {
        out[names[i]] = value;
      }
    }
    return out;
  }

  function apply() {
    var names = RULES.allowed.input.concat(RULES.allowed.focus);
    var i;
    for (i = 0; i < names.length; i++) {
      input.style[names[i]] = '';
    }
    var bags = focused ? [style.input, style.focus] : [style.input];
    for (i = 0; i < bags.length; i++) {
      for (var name in bags[i]) {
        if (Object.prototype.hasOwnProperty.call(bags[i], name)) {
          input.style[name] = bags[i][name];
        }
      }
    }
    for (var key in PLACEHOLDER_PROPERTY) {
      if (Object.prototype.hasOwnProperty.call(PLACEHOLDER_PROPERTY, key)) {
        if (style.placeholder[key]) {
          input.style.setProperty(PLACEHOLDER_PROPERTY[key], style.placeholder[key]);
        } else {
          input.style.removeProperty(PLACEHOLDER_PROPERTY[key]);
        }
      }
    }
  }

  function restyle(bag, colorScheme) {
    bag = bag || {};
    style = { input: allowed('input', bag.input), focus: allowed('focus', bag.focus),
      placeholder: allowed('placeholder', bag.placeholder) };
    if (typeof colorScheme === 'string' && !FORBIDDEN.test(colorScheme)) {
      document.documentElement.style.colorScheme = colorScheme; // the container's: no opaque backdrop
    }
    apply();
  }

  /* --- the conversation with the SDK ------------------------------------------------------------------------- */

  input.addEventListener('focus', function () {
    focused = true;
    apply();
    send({ type: 'focus' });
  });
  input.addEventListener('blur', function () {
    focused = false;
    apply();
    send({ type: 'blur' });
  });
  input.addEventListener('input', function () {
    reformat();
    send({ type: 'input', filled: input.value.length > 0 });
  });

  window.addEventListener('message', function (event) {
    var data = event.data;
    if (event.source !== window.parent || !data || data.hf !== true || data.id !== id) {
      return;
    }
    if (data.type === 'style') {
      restyle(data.style, data.colorScheme);
    } else if (data.type === 'collect') {
      event.source.postMessage({ hf: true, id: id, type: 'value', value: collected(), request: data.request },
        event.origin);
    }
  });

  send({ type: 'ready' });
})();
