// The merchant's checkout script, as the Hosted Fields examples' shared/public/checkout.js: the SDK appended (async)
// from the gateway's origin, onHostedFieldsReady assigned after it, Pay disabled until onReady, one tokenize per
// ticket.  What happened is written on the form (data-state, data-error-code, data-violations) for the test to read;
// the token itself goes to the merchant's server, never into the page.
var form = document.getElementById('payForm');
var pay = document.getElementById('pay');
var violations = 0;

document.addEventListener('securitypolicyviolation', function () {
  violations += 1;
  form.setAttribute('data-violations', String(violations));
});

function showError(code, message) {
  form.setAttribute('data-state', 'refused');
  form.setAttribute('data-error-code', String(code));
  document.getElementById('formError').textContent = message || 'The card could not be used.';
}

var script = document.createElement('script');
script.src = form.getAttribute('data-sdk-url');
script.async = true;
script.onerror = function () { showError(0, 'This page could not be prepared for a payment.'); };
document.head.appendChild(script);

window.onHostedFieldsReady = function (HostedFields) {
  var style = { input: { fontSize: '16px', padding: '0 12px', lineHeight: '42px', color: '#1d2329' },
    placeholder: { color: '#7a8691' } };
  var sdk = HostedFields.init({
    endpointId: form.getAttribute('data-endpoint-id'),
    fields: {
      cardNumber: { type: 'pan', placeholder: '1234 1234 1234 1234', style: style },
      expiryDate: { type: 'exp', placeholder: 'MM/YY', style: style },
      cvv: { type: 'cvv', placeholder: 'CVV', style: style }
    },
    onReady: function () {
      form.setAttribute('data-state', 'ready');
      pay.disabled = false;
      pay.textContent = 'Pay';
    },
    onToken: function () {
      form.setAttribute('data-state', 'tokenized');
      pay.textContent = 'Paying…';
    },
    onError: function (error) { showError(error.code, error.payerMessage); }
  });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    pay.disabled = true; // one tokenization per ephemeral ticket
    sdk.tokenize(form.getAttribute('data-ticket'));
  });
};
