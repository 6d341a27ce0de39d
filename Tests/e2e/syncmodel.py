"""The expected outcome of a sync scenario (Docs/SYNC.md), replayed from its acknowledged operations, as
Tests/KCSyncTests/SyncModel.swift does for the in-process scenarios: which records each place (a
machine's live vault, the remote) holds, and from them every item's state and history. Records are read
from the vault files with kcformat (the independent reader); nothing of kc's merge is used.

- a write is one new record, stamped after every record its machine holds, based on the item's state there;
- a merge holds the union of both places' records minus the puts rule 3 drops;
- a compaction keeps each live item's last put, every tombstone and one new marker whose frontier is
  everything the machine had seen (device-name records, written by sync init and clone, are kept too);
- an item's state is its last record by (timestamp, device, counter); its history, its puts in that order."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import kcformat

ZERO_BASE = bytes(24)
# The kinds of an item's records (a compaction marker or a device name belongs to no item).
ITEM_KINDS = (kcformat.PUT, kcformat.DELETE)


@dataclass(frozen=True)
class Record:
    id: tuple            # (device bytes, counter)
    order: tuple         # (timestamp, device bytes, counter): the merge order
    kind: int
    item: bytes
    base: bytes          # 24 bytes, zero for none
    secret: str | None   # a put's secret
    service: str | None
    frontier: tuple = ()  # a marker's ((device, counter), ...)

    def covered_by(self, marker: "Record") -> bool:
        return self.id[1] <= dict(marker.frontier).get(self.id[0], 0)


def read_records(data: bytes, password: bytes) -> dict:
    """Every record of a vault file, by record id."""
    out = {}
    for _, plain in kcformat.records(data, password):
        payload = kcformat.parse_payload(plain)
        order = kcformat.merge_order(plain)
        frontier, pos = [], 74
        while pos < len(plain):
            tag, length = plain[pos], struct.unpack_from("<I", plain, pos + 1)[0]
            if tag == 64:
                frontier.append((plain[pos + 5:pos + 21], struct.unpack_from("<Q", plain, pos + 21)[0]))
            pos += 5 + length
        secret = payload.fields.get(16, b"").decode() if payload.kind == kcformat.PUT else None
        service = payload.fields.get(2, b"").decode() if payload.kind == kcformat.PUT else None
        record = Record((order[1], order[2]), order, payload.kind, payload.item_id, plain[50:74], secret, service,
                        tuple(sorted(frontier)))
        out[record.id] = record
    return out


def contains(a: dict, b: dict) -> bool:
    """Frontier `a` holds all of `b` and more."""
    return all(a.get(d, 0) >= c for d, c in b.items()) and any(b.get(d, 0) < c for d, c in a.items())


@dataclass
class SyncModel:
    records: dict = field(default_factory=dict)     # record id -> Record
    places: dict = field(default_factory=dict)      # place -> set of record ids

    def held(self, place: str) -> list:
        return [self.records[i] for i in self.places.get(place, set())]

    def winner(self, item: bytes, place: str):
        mine = [r for r in self.held(place) if r.item == item and r.kind in ITEM_KINDS]
        return max(mine, key=lambda r: r.order) if mine else None

    def vector(self, place: str) -> dict:
        vector = {}
        for r in self.held(place):
            vector[r.id[0]] = max(vector.get(r.id[0], 0), r.id[1])
            for device, counter in r.frontier:
                vector[device] = max(vector.get(device, 0), counter)
        return vector

    def merge(self, place: str, *others: str) -> None:
        union = set(self.places.get(place, set()))
        for other in others:
            union |= self.places.get(other, set())
        self.places[place] = self.rule_three(union)

    def rule_three(self, ids: set) -> set:
        held = [self.records[i] for i in ids]
        markers = [dict(m.frontier) for m in held if m.kind == kcformat.COMPACTION]
        counting = [m for m in markers if not any(contains(o, m) for o in markers)]
        by_item = {}
        for r in held:
            if r.kind in ITEM_KINDS:
                by_item.setdefault(r.item, []).append(r)
        dropped, latest_seen = set(), set()
        for item_records in by_item.values():
            for frontier in counting:
                seen = sorted((r for r in item_records if r.id[1] <= frontier.get(r.id[0], 0)), key=lambda r: r.order)
                if seen:
                    latest_seen.add(seen[-1].id)
                    dropped |= {r.id for r in seen[:-1] if r.kind == kcformat.PUT}
        return ids - (dropped - latest_seen)

    def write(self, place: str, new: list) -> str | None:
        """Checks the one record a write added in `place` and takes it in; returns a problem or None."""
        if len(new) != 1:
            return f"a write added {len(new)} records"
        record = new[0]
        held = self.held(place)
        if held and record.order[0] <= max(r.order[0] for r in held):
            return "a write was stamped before a record its machine held"
        if any(r.item == record.item for r in held) or record.kind == kcformat.DELETE:
            last = self.winner(record.item, place)
            if last is None or record.base != last.id[0] + struct.pack("<Q", last.id[1]):
                return "a write is not based on the item's state on its machine"
        elif record.base != ZERO_BASE:
            return "a new item has a base"
        self.records[record.id] = record
        self.places.setdefault(place, set()).add(record.id)
        return None

    def name_device(self, place: str, new: list) -> str | None:
        """Checks the one device-name record `kc sync init` or `clone` added in `place` and takes it in."""
        if [r.kind for r in new] != [kcformat.DEVICE_NAME]:
            return f"naming the device added records of kinds {[r.kind for r in new]}"
        self.records[new[0].id] = new[0]
        self.places.setdefault(place, set()).add(new[0].id)
        return None

    def compact(self, place: str, new: list) -> str | None:
        markers = [r for r in new if r.kind == kcformat.COMPACTION]
        if len(markers) != 1 or dict(markers[0].frontier) != self.vector(place):
            return "a compaction's marker is not the one expected"
        # tombstones and device names are kept, whatever their age
        kept = {r.id for r in self.held(place) if r.kind in (kcformat.DELETE, kcformat.DEVICE_NAME)}
        for item in {r.item for r in self.held(place) if r.kind == kcformat.PUT}:
            last = self.winner(item, place)
            if last.kind == kcformat.PUT:
                kept.add(last.id)
        self.records[markers[0].id] = markers[0]
        self.places[place] = kept | {markers[0].id}
        return None

    def items(self, place: str) -> dict:
        """The live items: service -> secret."""
        out = {}
        for item in {r.item for r in self.held(place) if r.kind in ITEM_KINDS}:
            last = self.winner(item, place)
            if last.kind == kcformat.PUT:
                out[last.service] = last.secret
        return out

    def history(self, service: str, place: str) -> list:
        item = next(r.item for r in self.records.values() if r.service == service)
        return [r.secret for r in sorted((r for r in self.held(place) if r.item == item and r.kind == kcformat.PUT),
                                         key=lambda r: r.order)]
