// The 3-D Secure return page, as the examples' result.js: the order comes from the query the signed callback
// redirected to (the server checked its control), and the page polls status without bouncing to the issuer again.
var params = new URLSearchParams(window.location.search);
var orderId = params.get('orderid') || '';
var clientOrderId = params.get('merchant_order') || '';
if (clientOrderId) {
  document.getElementById('orderRef').textContent = 'Order ' + clientOrderId;
}
if (orderId) {
  pollStatus({ basePath: CONFIG.basePath, orderId: orderId, clientOrderId: clientOrderId, redirected: true });
} else {
  showStatus({ status: 'error', 'error-message': 'Nothing to show: open this page from a payment.' });
}
