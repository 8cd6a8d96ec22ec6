"""Register a tenant, create a customer and an invoice, and read the invoice back — with the generated client.

    KOSH_URL=http://127.0.0.1:3000 python3 examples/first_invoice.py

Prints one JSON object with what it did (the test in clients/python/test reads it).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kosh_client import KoshClient, KoshError  # noqa: E402

base_url = os.environ.get("KOSH_URL", "http://127.0.0.1:3000")

anonymous = KoshClient(base_url)
registered = anonymous.register_tenant({"name": "Python Co", "email": "owner@python.test"})["data"]
kosh = KoshClient(base_url, registered["api_key"]["key"])

customer = kosh.create_customer({"email": "buyer@python.test", "name": "Buyer"})["data"]
invoice = kosh.create_invoice(
    {
        "customer_id": customer["id"],
        "lines": [{"description": "Consulting", "quantity": 2, "unit_amount": 25000, "hsn_code": "998314"}],
    }
)["data"]
again = kosh.get_invoice(invoice["id"])["data"]
listed = kosh.list_invoices(customer_id=customer["id"])
pdf = kosh.get_invoice_pdf(invoice["id"])

try:
    kosh.create_customer({"name": "No e-mail"})  # type: ignore[typeddict-item]
    refusal = None
except KoshError as error:
    refusal = {"status": error.status, "code": error.code, "message": error.message}

print(
    json.dumps(
        {
            "tenant_id": registered["tenant"]["id"],
            "customer_id": customer["id"],
            "invoice": {k: again[k] for k in ("id", "number", "status", "currency", "subtotal", "total", "customer_id")},
            "listed": [i["id"] for i in listed["data"]],
            "pdf_starts": pdf[:5].decode("latin-1"),
            "refusal": refusal,
        }
    )
)
