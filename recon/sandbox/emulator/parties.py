"""The /v2/parties endpoints: create, read, bind a wallet."""

from __future__ import annotations

import uuid
from typing import Any

from recon.sandbox import validation as v
from recon.sandbox.clock import format_ts
from recon.sandbox.emulator.responses import _field_error, _HttpError
from recon.sandbox.emulator.state import _digits, _Party, _State, _Store


class _Parties(_State):
    def _party(self, store: _Store, party_id: str) -> _Party:
        canon = v.parse_uuid(party_id)
        party = store.party_by_id.get(canon) if canon else None
        if party is None:
            raise _HttpError(404, "party_not_found", "no party with this id in this instance")
        return party

    def _create_party(self, store: _Store, body: dict[str, Any]) -> dict[str, Any]:
        try:
            doc = v.req_str(body, "cpf")
            if not (doc.isascii() and doc.isdigit()):
                raise v.FieldError("cpf", "must contain digits only (no dots, dashes or spaces)")
            if len(doc) not in (11, 14):
                raise v.FieldError("cpf", "must have 11 digits (CPF) or 14 digits (CNPJ)")
            ok = v.is_valid_cpf(doc) if len(doc) == 11 else v.is_valid_cnpj(doc)
            if not ok:
                kind = "CPF" if len(doc) == 11 else "CNPJ"
                raise v.FieldError(
                    "cpf", f"is not a valid {kind} (check digits)", "invalid_document"
                )
            by_length = "person" if len(doc) == 11 else "business"
            party_type = v.opt_str(body, "partyType") or by_length
            if party_type not in ("person", "business"):
                raise v.FieldError("partyType", 'must be "person" or "business"')
            if party_type != by_length:
                raise v.FieldError(
                    "partyType",
                    "person needs an 11-digit CPF and business a 14-digit CNPJ",
                    "party_type_mismatch",
                )
            name = v.req_str(body, "displayName", lo=2, hi=100)
            if not name.strip():
                raise v.FieldError("displayName", "must not be blank")
            country = v.opt_str(body, "countryCode") or "BR"
            if not v._COUNTRY.fullmatch(country):
                raise v.FieldError("countryCode", "must be an ISO 3166-1 alpha-2 code, e.g. BR")
            external_ref = v.opt_str(body, "externalRef", hi=255)
            email = v.opt_str(body, "email")
            if email is not None and not v.is_valid_email(email):
                raise v.FieldError("email", "must be a valid e-mail address")
            phone = v.opt_str(body, "phone")
            if phone is not None and not v.is_valid_phone(phone):
                raise v.FieldError("phone", "must be a phone number with 8 to 15 digits")
        except v.FieldError as err:
            raise _field_error(err) from None
        if doc in store.party_by_doc:
            raise _HttpError(409, "party_exists", "a party already exists for this document")
        party = self._add_party(
            store,
            doc=doc,
            party_type=party_type,
            display_name=name,
            country=country,
            external_ref=external_ref,
            email=email,
            phone=phone,
        )
        return self._render_party(party)

    def _add_party(self, store: _Store, **kw: Any) -> _Party:
        now = self.clock.now_ms()
        party = _Party(
            idx=len(store.parties),
            instance_id=store.inst.instance_id,
            id=str(uuid.UUID(int=self._rng.getrandbits(128), version=4)),
            status="pending",
            wallet=None,
            created_ms=now,
            updated_ms=now,
            **kw,
        )
        store.parties.append(party)
        store.party_by_id[party.id] = party
        store.party_by_doc[party.doc] = party
        # PIX keys for offramp resolution: document, e-mail, phone (first party wins)
        store.party_by_pix_key.setdefault(party.doc, party)
        if party.email:
            store.party_by_pix_key.setdefault(party.email.lower(), party)
        if party.phone:
            store.party_by_pix_key.setdefault("tel:" + _digits(party.phone), party)
        return party

    def _bind_wallet(self, store: _Store, party: _Party, body: dict[str, Any]) -> dict[str, Any]:
        try:
            extra = sorted(set(body) - {"solanaWallet"})
            if extra:
                raise v.FieldError(extra[0], "is not allowed; the body has exactly solanaWallet")
            wallet = v.req_str(body, "solanaWallet")
            if not v.is_valid_solana_address(wallet):
                raise v.FieldError(
                    "solanaWallet",
                    "must be a Solana address (base58 decoding to 32 bytes)",
                    "invalid_address",
                )
        except v.FieldError as err:
            raise _field_error(err) from None
        owner = store.party_by_wallet.get(wallet)
        if owner is not None and owner is not party:
            raise _HttpError(400, "wallet_already_bound", "solanaWallet is bound to another party")
        self.bind_wallet_direct(store, party, wallet)
        return self._render_party(party)

    def bind_wallet_direct(self, store: _Store, party: _Party, wallet: str) -> None:
        """Bind without HTTP (used by bulk_load/drift parties)."""
        if party.wallet and store.party_by_wallet.get(party.wallet) is party:
            del store.party_by_wallet[party.wallet]
        party.wallet = wallet
        party.refresh()
        party.updated_ms = self.clock.now_ms()
        store.party_by_wallet[wallet] = party
        store.cache.clear()  # the intents' `party` subset shows the current wallet

    def _render_party(self, p: _Party) -> dict[str, Any]:
        return {
            "id": p.id,
            "instanceId": p.instance_id,
            "partyType": p.party_type,
            "countryCode": p.country,
            "externalRef": p.external_ref,
            "status": p.status,
            "profile": {
                "displayName": p.display_name,
                "documentType": "cpf" if len(p.doc) == 11 else "cnpj",
                "documentMasked": p.masked,
                "solanaWallet": p.wallet,
            },
            "createdAt": format_ts(p.created_ms),
            "updatedAt": format_ts(p.updated_ms),
        }
