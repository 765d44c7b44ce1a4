// Order status polling, shared by the payment page and the 3-D Secure return page, as the examples'
// shared/public/status.js: right after the sale, then every CONFIG.pollMs (4 s in the examples); the payer is sent
// to redirect-to once; final statuses stop it.  What the page showed is kept in window.SEEN for the test.
var FINAL_STATUSES = ['approved', 'declined', 'error', 'filtered'];
var POLL_INTERVAL = (window.CONFIG && window.CONFIG.pollMs) || 4000;
var MAX_POLLS = 45;
window.SEEN = window.SEEN || { statuses: [], violations: [] };

document.addEventListener('securitypolicyviolation', function (event) {
  window.SEEN.violations.push(event.violatedDirective + ' ' + event.blockedURI);
});

function pollStatus(order) {
  order.polls = (order.polls || 0) + 1;
  if (order.polls > MAX_POLLS) {
    showStatus({ status: 'error', 'error-message': 'The payment is taking too long.' });
    return;
  }
  var url = order.basePath + '/status?orderId=' + encodeURIComponent(order.orderId) +
    '&clientOrderId=' + encodeURIComponent(order.clientOrderId);
  fetch(url)
    .then(function (response) { return response.json(); })
    .then(function (status) {
      if (!status.status) {
        showStatus({ status: 'error', 'error-message': status['error-message'] || status.error || 'no status' });
        return;
      }
      showStatus(status);
      if (status['redirect-to'] && !order.redirected) {
        order.redirected = true;
        location.href = status['redirect-to'];
        return;
      }
      if (FINAL_STATUSES.indexOf(status.status) !== -1) { return; }
      setTimeout(function () { pollStatus(order); }, POLL_INTERVAL);
    })
    .catch(function (error) { showStatus({ status: 'error', 'error-message': error.message }); });
}

function showStatus(data) {
  var panel = document.getElementById('orderStatus');
  var key = String(data.status || 'processing').toLowerCase();
  window.SEEN.statuses.push(key);
  panel.hidden = false;
  panel.setAttribute('data-status', key);
  panel.setAttribute('data-final', FINAL_STATUSES.indexOf(key) !== -1 ? 'true' : 'false');
  var card = (data['card-type'] || '') + ' ' + (data['last-four-digits'] ? '•••• ' + data['last-four-digits'] : '');
  panel.textContent = key + (data['merchant-order-id'] ? ' · order ' + data['merchant-order-id'] : '') +
    (card.trim() ? ' · ' + card.trim() : '') + (data['error-message'] ? ' · ' + data['error-message'] : '');
}
