// The payment page's script, as the examples' shared/public/checkout.js: the SDK appended (async) from CONFIG.sdkUrl,
// onHostedFieldsReady assigned after it, Pay disabled until onReady, one tokenize per ticket, the token sent to
// our own /pay, then the order's status polled (status.js).
var CONFIG = window.CONFIG;
var FIELD_STYLE = {
  input: { color: '#0a0b0c', backgroundColor: '#ffffff', caretColor: '#348bff', fontFamily: 'sans-serif',
    fontSize: '16px', fontWeight: '500', fontVariantNumeric: 'tabular-nums', letterSpacing: '0.01em',
    lineHeight: '42px', textAlign: 'left', padding: '0 14px', border: '0', outline: 'none',
    transition: 'color 160ms cubic-bezier(0.4, 0, 0.2, 1)' },
  placeholder: { color: '#69747a', fontWeight: '500', letterSpacing: '0.01em' },
  focus: { color: '#0a0b0c', backgroundColor: '#ffffff', caretColor: '#348bff' }
};
var FIELD_IDS = ['cardNumber', 'expiryDate', 'cvv'];

function showFormError(kind, message) {
  document.getElementById('formError').textContent = message || kind;
  document.getElementById('formError').setAttribute('data-kind', kind);
  for (var i = 0; i < FIELD_IDS.length; i++) {
    document.getElementById(FIELD_IDS[i]).classList.add('hf-field--error');
  }
  var pay = document.getElementById('pay');
  var terminal = kind === 'rejected' || kind === 'spent' || kind === 'unavailable';
  pay.disabled = terminal;
  pay.textContent = terminal ? 'Reload to try again' : 'Pay';
}

function fieldValue(id) { return document.getElementById(id).value.replace(/^\s+|\s+$/g, ''); }

function customerDetails() {
  return { firstName: fieldValue('firstName'), lastName: fieldValue('lastName'), email: fieldValue('email'),
    cardPrintedName: fieldValue('cardholderName') };
}

function browserInfo() {
  return {
    customer_browser_info: 'true',
    customer_browser_javascript_enabled: 'true',
    customer_browser_java_enabled: 'false',
    customer_browser_accept_language: navigator.language,
    customer_browser_color_depth: String(screen.colorDepth),
    customer_browser_screen_width: String(screen.width),
    customer_browser_screen_height: String(screen.height),
    customer_browser_time_zone: String(new Date().getTimezoneOffset())
  };
}

function sendTokenToServer(hostedFieldsToken) {
  fetch(CONFIG.basePath + '/pay', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ hostedFieldsToken: hostedFieldsToken, browser: browserInfo(), customer: customerDetails() })
  })
    .then(function (response) { return response.json(); })
    .then(function (sale) {
      window.SEEN.sale = sale;
      if (!sale['paynet-order-id']) {
        showFormError('retry', sale['error-message'] || sale.error);
        return;
      }
      pollStatus({ basePath: CONFIG.basePath, orderId: sale['paynet-order-id'], clientOrderId: sale.clientOrderId });
    })
    .catch(function (error) { showFormError('network', error.message); });
}

function showError(error) {
  window.SEEN.sdkError = error;
  var spentTicket = error.code >= 4000 && error.code < 5000;
  showFormError(error.code === 4004 ? 'rejected' : (spentTicket ? 'spent' : 'retry'), error.payerMessage);
}

document.getElementById('orderAmount').textContent = CONFIG.amount + ' ' + CONFIG.currency;
if (!CONFIG.ephemeralTicket) {
  showFormError('unavailable', 'This page could not be prepared for a payment.');
} else {
  var script = document.createElement('script');
  script.src = CONFIG.sdkUrl;
  script.async = true;
  script.onerror = function () { showFormError('unavailable', 'This page could not be prepared for a payment.'); };
  document.head.appendChild(script);
}

window.onHostedFieldsReady = function (HostedFields) {
  var sdk = HostedFields.init({
    endpointId: CONFIG.endpointId,
    fields: {
      cardNumber: { type: 'pan', placeholder: '1234 1234 1234 1234', style: FIELD_STYLE },
      expiryDate: { type: 'exp', style: FIELD_STYLE },
      cvv: { type: 'cvv', style: FIELD_STYLE }
    },
    onReady: function () {
      var pay = document.getElementById('pay');
      pay.disabled = false;
      pay.textContent = 'Pay ' + CONFIG.amount + ' ' + CONFIG.currency;
    },
    onToken: sendTokenToServer,
    onError: showError
  });
  document.getElementById('payForm').addEventListener('submit', function (event) {
    event.preventDefault();
    document.getElementById('pay').disabled = true; // one tokenization per ephemeralTicket
    sdk.tokenize(CONFIG.ephemeralTicket);
  });
};
