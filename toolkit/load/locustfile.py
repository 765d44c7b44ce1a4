"""The locustfile ``gatekit load`` runs: the certification flows as one Locust user class.

Run it with Locust's own command as well (``locust -f $(python -c 'import toolkit.load.locustfile as f;
print(f.__file__)') --host http://127.0.0.1:8080/paynet``); a locustfile of your own imports ``GatewayUser``
(``from toolkit.load import GatewayUser``) and adds its tasks.
"""

from __future__ import annotations

from toolkit.load.users import GatewayUser


class CertificationFlows(GatewayUser):
    """The flows of the plan (``gatekit load --weights``), picked by weight."""
