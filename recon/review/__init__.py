"""recon.review: the break-review workspace (`recon review`) and the audit trail's commands.

create_app(data, *, users=None, ...) -> Starlette app   (recon.review.app)
`recon review [--host 127.0.0.1] [--port 8710]`, `recon review adduser NAME --role ROLE`,
`recon audit verify`
"""
