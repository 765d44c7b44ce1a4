/* gatekit simulator: the Hosted Fields SDK (hosted-fields.md sections 4, 5 and 12), served from the simulator's
 * origin.  A classic script the merchant's page appends with `async`; it defines the global HostedFields and hands
 * it to window.onHostedFieldsReady, waiting a while for the page to assign that.
 *
 *   HostedFields.init({endpointId, fields: {<container id>: {type: 'pan'|'exp'|'cvv', placeholder, style}},
 *                      onReady, onToken, onError}) -> {tokenize(ephemeralTicket), setStyle(containerId, style),
 *                                                       destroy()}
 *
 * Each container gets one iframe from this origin (/hf/<type>); the card values come back from them over
 * postMessage when tokenize asks, and go to POST <this origin>/api/v4/tokenize/hosted-fields from the page.
 * The rules (style allowlist, the SDK's own error codes) and the choices made where the public material is silent
 * are toolkit/simulator/web/hosted_fields_pages.py's; the rules are written in below as the file is served.
 * Plain ES5.  Nothing inline goes into the merchant's page: elements and element.style only.
 */
(function () {
  'use strict';

  var RULES = /*HF_RULES*/ {};
  var TAG = '[HostedFields] ';
  var SDK_PATH = /\/(?:sdk|assets\/libs)\/hosted-fields\/[^/?#]+\/index\.js(?:[?#].*)?$/;
  var TYPES = { pan: 'Card number', exp: 'Expiry date', cvv: 'Security code' };
  var BODY_FIELD = { pan: 'cardNumber', exp: 'expiryDate', cvv: 'cvv' }; // also the `field` of a refusal
  var CLASSES = { focus: 'hf-field--focus', filled: 'hf-field--filled', error: 'hf-field--error' };
  var READY_POLL_MS = 20;
  var READY_WAIT_MS = 10000;
  var COLLECT_WAIT_MS = 5000;
  var FORBIDDEN = new RegExp(RULES.forbidden, 'i');

  function ownScript() {
    if (document.currentScript && document.currentScript.src) {
      return document.currentScript.src;
    }
    var scripts = document.getElementsByTagName('script');
    for (var i = scripts.length - 1; i >= 0; i--) {
      if (SDK_PATH.test(scripts[i].src)) {
        return scripts[i].src;
      }
    }
    return '';
  }

  var SOURCE = ownScript();
  var ORIGIN = SOURCE ? new URL(SOURCE).origin : '';
  var ROOT = SDK_PATH.test(SOURCE) ? SOURCE.replace(SDK_PATH, '') : ORIGIN; // the simulator's root
  var live = {}; // container id -> the instance whose iframe is in it

  function later(callback, argument) {
    if (typeof callback === 'function') {
      setTimeout(function () { callback(argument); }, 0);
    }
  }

  function error(name, detail, field) {
    var known = RULES.errors[name];
    var out = { code: known.code, message: known.message + (detail ? ': ' + detail : ''),
      payerMessage: known.payerMessage, tip: 'gatekit simulator SDK' };
    if (field) {
      out.field = field;
    }
    return out;
  }

  /* --- the style bag: only the allowlist survives, the rest is dropped with a warning ------------------------ */

  function allowedPart(part, bag, where) {
    var out = {};
    var names = RULES.allowed[part];
    if (bag === undefined || bag === null) {
      return out;
    }
    if (typeof bag !== 'object') {
      console.warn(TAG + where + '.' + part + ' dropped: a style part is an object of properties');
      return out;
    }
    for (var name in bag) {
      if (!Object.prototype.hasOwnProperty.call(bag, name)) {
        continue;
      }
      var value = typeof bag[name] === 'number' && isFinite(bag[name]) ? String(bag[name]) : bag[name];
      if (names.indexOf(name) < 0) {
        console.warn(TAG + where + '.' + part + '.' + name + ' dropped: not on the style allowlist');
      } else if (typeof value !== 'string' || value.length > RULES.maxLength || FORBIDDEN.test(value)) {
        console.warn(TAG + where + '.' + part + '.' + name + ' dropped: the value is refused (no url(), ' +
          'selectors, rules or comments)');
      } else {
        out[name] = value;
      }
    }
    return out;
  }

  function allowedStyle(style, where) {
    var out = {};
    if (style === undefined || style === null) {
      return out;
    }
    for (var part in style) {
      if (Object.prototype.hasOwnProperty.call(style, part) && !RULES.allowed[part]) {
        console.warn(TAG + where + '.' + part + ' dropped: a style has only input, placeholder and focus');
      }
    }
    for (var known in RULES.allowed) {
      if (Object.prototype.hasOwnProperty.call(RULES.allowed, known)) {
        out[known] = allowedPart(known, style[known], where);
      }
    }
    return out;
  }

  /* --- a disguised field: checked before a card value leaves its iframe -------------------------------------- */

  function disguise(field) {
    var elements = [field.container, field.frame];
    for (var i = 0; i < elements.length; i++) {
      var seen = window.getComputedStyle(elements[i]);
      var which = i === 0 ? 'its container' : 'its iframe';
      if (parseFloat(seen.opacity) < 1) { return which + ' has opacity ' + seen.opacity; }
      if (seen.transform && seen.transform !== 'none') { return which + ' is transformed'; }
      if (seen.filter && seen.filter !== 'none') { return which + ' has a filter'; }
      if (seen.clipPath && seen.clipPath !== 'none') { return which + ' has a clip-path'; }
      if (seen.visibility !== 'visible' || seen.display === 'none') { return which + ' is not visible'; }
    }
    var box = field.frame.getBoundingClientRect();
    if (box.width < 1 || box.height < 1) {
      return 'its iframe has no size';
    }
    var x = box.left + box.width / 2;
    var y = box.top + box.height / 2;
    if (x >= 0 && y >= 0 && x < window.innerWidth && y < window.innerHeight) {
      var top = document.elementFromPoint(x, y);
      if (top && top !== field.frame) {
        return 'an element (' + top.tagName.toLowerCase() + (top.id ? '#' + top.id : '') + ') lies over it';
      }
    }
    return '';
  }

  /* --- one init() --------------------------------------------------------------------------------------------- */

  function Instance(options) {
    this.options = options || {};
    this.fields = {}; // container id -> {id, type, container, frame, ready, style}
    this.ids = [];
    this.announced = false;
    this.pending = null;
    this.destroyed = false;
    this.refused = null;
    this.listener = this.onMessage.bind(this);
  }

  Instance.prototype.mount = function () {
    if (!ORIGIN || ORIGIN === window.location.origin) {
      var why = ORIGIN ? 'the page is ' + window.location.origin : 'the SDK cannot tell its own address';
      this.refused = error('merchant_origin', why);
      console.error(TAG + this.refused.message);
      later(this.options.onError, this.refused);
      return;
    }
    window.addEventListener('message', this.listener);
    var fields = this.options.fields || {};
    var types = {};
    for (var id in fields) {
      if (Object.prototype.hasOwnProperty.call(fields, id)) {
        this.mountField(id, fields[id] || {}, types);
      }
    }
    if (!this.ids.length) {
      console.error(TAG + 'init: no card field was placed (fields: {<container id>: {type: "pan"}, ...})');
    }
  };

  Instance.prototype.mountField = function (id, descriptor, types) {
    var container = document.getElementById(id);
    if (!TYPES[descriptor.type] || types[descriptor.type]) {
      console.error(TAG + 'fields.' + id + ': type must be one of pan, exp, cvv, each once');
      return;
    }
    if (!container) {
      console.error(TAG + 'fields.' + id + ': no element has this id');
      return;
    }
    if (live[id] && live[id] !== this) {
      console.warn(TAG + 'fields.' + id + ': another init() had this container; its fields are destroyed');
      live[id].destroy();
    }
    types[descriptor.type] = true;
    var frame = document.createElement('iframe');
    var query = '?id=' + encodeURIComponent(id);
    if (typeof descriptor.placeholder === 'string' && descriptor.placeholder) {
      query += '&placeholder=' + encodeURIComponent(descriptor.placeholder);
    }
    frame.src = ROOT + RULES.fieldRoot + '/' + descriptor.type + query;
    frame.title = TYPES[descriptor.type];
    frame.setAttribute('data-hf-field', id);
    frame.setAttribute('data-hf-type', descriptor.type);
    frame.setAttribute('scrolling', 'no');
    frame.style.display = 'block';
    frame.style.width = '100%';
    frame.style.height = '100%';
    frame.style.border = '0';
    frame.style.margin = '0';
    frame.style.padding = '0';
    frame.style.background = 'transparent';
    this.fields[id] = { id: id, type: descriptor.type, container: container, frame: frame, ready: false,
      style: allowedStyle(descriptor.style, 'fields.' + id + '.style') };
    this.ids.push(id);
    live[id] = this;
    container.appendChild(frame);
  };

  Instance.prototype.allReady = function () {
    for (var i = 0; i < this.ids.length; i++) {
      if (!this.fields[this.ids[i]].ready) {
        return false;
      }
    }
    return this.ids.length > 0;
  };

  Instance.prototype.post = function (field, message) {
    if (field.frame.contentWindow) {
      message.hf = true;
      message.id = field.id;
      field.frame.contentWindow.postMessage(message, ORIGIN);
    }
  };

  Instance.prototype.sendStyle = function (field) {
    var scheme = window.getComputedStyle(field.container).colorScheme;
    this.post(field, { type: 'style', style: field.style, colorScheme: scheme || 'normal' });
  };

  Instance.prototype.onMessage = function (event) {
    var data = event.data;
    if (event.origin !== ORIGIN || !data || data.hf !== true || typeof data.id !== 'string') {
      return;
    }
    var field = Object.prototype.hasOwnProperty.call(this.fields, data.id) ? this.fields[data.id] : null;
    if (!field || event.source !== field.frame.contentWindow) {
      return;
    }
    var classes = field.container.classList;
    if (data.type === 'ready') {
      field.ready = true;
      this.sendStyle(field); // what setStyle sent before the frame listened was lost: send it again
      if (this.allReady() && !this.announced) {
        this.announced = true;
        later(this.options.onReady);
      }
    } else if (data.type === 'focus') {
      classes.add(CLASSES.focus);
    } else if (data.type === 'blur') {
      classes.remove(CLASSES.focus);
    } else if (data.type === 'input') {
      classes.toggle(CLASSES.filled, data.filled === true);
      classes.remove(CLASSES.error);
    } else if (data.type === 'value') {
      this.collect(field, data);
    }
  };

  Instance.prototype.setStyle = function (id, style) {
    if (this.destroyed || !Object.prototype.hasOwnProperty.call(this.fields, id)) {
      console.warn(TAG + 'setStyle: no card field in #' + id);
      return;
    }
    var field = this.fields[id];
    field.style = allowedStyle(style, 'setStyle(' + id + ')');
    if (field.ready) {
      this.sendStyle(field);
    }
  };

  /* --- tokenize: collect the three values, send them, hand over the token or the refusal --------------------- */

  Instance.prototype.tokenize = function (ephemeralTicket) {
    var refusal = this.refusal();
    if (refusal) {
      this.fail(refusal);
      return;
    }
    var self = this;
    var request = String(Date.now()) + '-' + String(Math.random()).slice(2);
    this.pending = { ticket: ephemeralTicket, request: request, values: {},
      timer: setTimeout(function () { self.fail(error('no_answer', 'none within ' + COLLECT_WAIT_MS + ' ms')); },
        COLLECT_WAIT_MS) };
    for (var i = 0; i < this.ids.length; i++) {
      this.post(this.fields[this.ids[i]], { type: 'collect', request: request });
    }
  };

  Instance.prototype.refusal = function () {
    if (this.refused) { return this.refused; }
    if (this.destroyed) { return error('not_ready', 'destroy() was called'); }
    if (this.pending) { return error('not_ready', 'a tokenization is in progress'); }
    if (!this.allReady()) { return error('not_ready', 'wait for onReady'); }
    for (var i = 0; i < this.ids.length; i++) {
      var why = disguise(this.fields[this.ids[i]]);
      if (why) {
        console.error(TAG + 'card field #' + this.ids[i] + ': ' + why);
        return error('disguised', '#' + this.ids[i] + ': ' + why, this.ids[i]);
      }
    }
    return null;
  };

  Instance.prototype.collect = function (field, data) {
    var pending = this.pending;
    if (!pending || data.request !== pending.request || typeof data.value !== 'string') {
      return;
    }
    pending.values[field.type] = data.value;
    for (var i = 0; i < this.ids.length; i++) {
      if (!Object.prototype.hasOwnProperty.call(pending.values, this.fields[this.ids[i]].type)) {
        return;
      }
    }
    clearTimeout(pending.timer);
    this.send(pending);
  };

  Instance.prototype.send = function (pending) {
    var self = this;
    var body = { ephemeralTicket: pending.ticket };
    for (var type in BODY_FIELD) {
      if (Object.prototype.hasOwnProperty.call(BODY_FIELD, type)) {
        body[BODY_FIELD[type]] = pending.values[type] || '';
      }
    }
    fetch(ROOT + '/api/v4/tokenize/hosted-fields', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store'
    }).then(function (response) {
      return response.json().then(null, function () { return null; });
    }).then(function (answer) {
      self.settle(answer);
    }, function (failure) {
      self.fail(error('network', failure && failure.message));
    });
  };

  Instance.prototype.settle = function (answer) {
    this.pending = null;
    if (answer && typeof answer.hostedFieldsToken === 'string' && answer.hostedFieldsToken) {
      later(this.options.onToken, answer.hostedFieldsToken);
      return;
    }
    var code = answer ? Number(answer.code) : NaN;
    if (!answer || typeof answer !== 'object' || answer.code === null || answer.code === '' || !isFinite(code)) {
      this.fail(error('bad_answer'));
      return;
    }
    var refusal = { code: code, message: String(answer.message || 'the gateway refused the card') };
    var keys = ['payerMessage', 'field', 'tip'];
    for (var i = 0; i < keys.length; i++) {
      if (typeof answer[keys[i]] === 'string') {
        refusal[keys[i]] = answer[keys[i]];
      }
    }
    this.fail(refusal);
  };

  Instance.prototype.fail = function (refusal) {
    if (this.pending) {
      clearTimeout(this.pending.timer);
      this.pending = null;
    }
    var field = refusal.field && this.fieldNamed(refusal.field);
    if (field) {
      field.container.classList.add(CLASSES.error);
    }
    later(this.options.onError, refusal);
  };

  Instance.prototype.fieldNamed = function (name) {
    for (var i = 0; i < this.ids.length; i++) {
      var field = this.fields[this.ids[i]];
      if (field.id === name || BODY_FIELD[field.type] === name) {
        return field;
      }
    }
    return null;
  };

  Instance.prototype.destroy = function () {
    if (this.destroyed) {
      return;
    }
    this.destroyed = true;
    window.removeEventListener('message', this.listener);
    if (this.pending) {
      clearTimeout(this.pending.timer);
      this.pending = null;
    }
    for (var i = 0; i < this.ids.length; i++) {
      var field = this.fields[this.ids[i]];
      if (field.frame.parentNode) {
        field.frame.parentNode.removeChild(field.frame);
      }
      field.container.classList.remove(CLASSES.focus, CLASSES.filled, CLASSES.error);
      if (live[field.id] === this) {
        delete live[field.id];
      }
    }
  };

  var HostedFields = {
    init: function (options) {
      var instance = new Instance(options);
      instance.mount();
      return {
        tokenize: function (ephemeralTicket) { instance.tokenize(ephemeralTicket); },
        setStyle: function (id, style) { instance.setStyle(id, style); },
        destroy: function () { instance.destroy(); }
      };
    }
  };
  window.HostedFields = HostedFields;

  /* The page appends this script (async) before it assigns window.onHostedFieldsReady; a React page assigns it
     later still.  So wait for it, a bounded while. */
  var waited = 0;
  (function announce() {
    if (typeof window.onHostedFieldsReady === 'function') {
      window.onHostedFieldsReady(HostedFields);
    } else if (waited >= READY_WAIT_MS) {
      console.error(TAG + 'window.onHostedFieldsReady was not assigned within ' + READY_WAIT_MS + ' ms');
    } else {
      waited += READY_POLL_MS;
      setTimeout(announce, READY_POLL_MS);
    }
  })();
})();
