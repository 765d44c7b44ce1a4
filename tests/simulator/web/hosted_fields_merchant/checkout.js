// The merchant's page script, loaded from 'self' as the examples' shared/public/checkout.js is: it appends the
// SDK (async) and only then assigns window.onHostedFieldsReady.  What happens is kept in window.HF for the test.
var CONFIG = window.CONFIG;
var HF = (window.HF = { ready: 0, tokens: [], errors: [], violations: [], sdk: null });

document.addEventListener('securitypolicyviolation', function (event) {
  HF.violations.push(event.violatedDirective + ' ' + event.blockedURI);
});

var FIELD_STYLE = {
  input: {
    color: 'rgb(10, 11, 12)', backgroundColor: 'rgb(255, 255, 255)', caretColor: 'rgb(52, 139, 255)',
    fontFamily: 'sans-serif', fontSize: '16px', fontWeight: '500', fontVariantNumeric: 'tabular-nums',
    letterSpacing: '0.01em', lineHeight: '42px', textAlign: 'left', padding: '0 14px', border: '0',
    outline: 'none', transition: 'color 160ms cubic-bezier(0.4, 0, 0.2, 1)'
  },
  placeholder: { color: 'rgb(105, 116, 122)', fontWeight: '500', letterSpacing: '0.01em' },
  focus: { color: 'rgb(200, 0, 0)' }
};

var script = document.createElement('script');
script.src = CONFIG.sdkUrl;
script.async = true;
script.onerror = function () { HF.loadFailed = true; };
document.head.appendChild(script);

function start(HostedFields) {
  HF.sdk = HostedFields.init({
    endpointId: CONFIG.endpointId,
    fields: {
      cardNumber: { type: 'pan', placeholder: '1234 1234 1234 1234', style: FIELD_STYLE },
      expiryDate: { type: 'exp', style: FIELD_STYLE },
      cvv: { type: 'cvv', style: FIELD_STYLE }
    },
    onReady: function () {
      HF.ready += 1;
      document.getElementById('pay').disabled = false;
    },
    onToken: function (token) { HF.tokens.push(token); },
    onError: function (error) { HF.errors.push(error); }
  });
  document.getElementById('payForm').addEventListener('submit', function (event) {
    event.preventDefault();
    document.getElementById('pay').disabled = true; // one tokenization per ticket
    HF.sdk.tokenize(CONFIG.ephemeralTicket);
  });
}

if (CONFIG.readyDelay) {
  setTimeout(function () { window.onHostedFieldsReady = start; }, CONFIG.readyDelay);
} else {
  window.onHostedFieldsReady = start;
}
