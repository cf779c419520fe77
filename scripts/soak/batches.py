"""Batches (docs/batch-format.md §2 and §3, lists only): the fill semantics, a batch applied
with its values or checked against the new list, and JSON in canonical and compact form."""
import json

from .outcomes import short


def canon(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact(text):
    """JSON `text` without the whitespace between its tokens, strings as they are (feeds §4)."""
    out, in_string, escaped = [], False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in " \t\r\n":
            continue
        out.append(char)
    return "".join(out)


class BatchError(Exception):
    pass


def identity(item):
    """batch-format §1.2: an object's `id` when a string or a number, else the item itself."""
    if isinstance(item, dict):
        key = item.get("id")
        if isinstance(key, (str, int, float)) and not isinstance(key, bool):
            return (0, key)
        return (1, canon(item))
    if isinstance(item, (str, int, float)) and not isinstance(item, bool):
        return (0, item)
    return (1, canon(item))


def fill(old_len, batch):
    """Where each new row comes from, by the fill semantics: per new position, ("i", k) for
    the k-th insert or ("o", i, r) for old row i (r: its index in rows.reloaded, else -1).
    Raises BatchError for a batch that does not fit (batch-format §3, §2.5, §4)."""
    if not isinstance(batch, dict) or "sections" in batch:
        raise BatchError("not a list batch")
    rows, counts = batch.get("rows"), batch.get("counts")
    if not isinstance(rows, dict) or not isinstance(counts, dict):
        raise BatchError("rows or counts missing")
    deleted, inserted, reloaded, moved = (rows.get(k, []) for k in ("deleted", "inserted", "reloaded", "moved"))
    if counts.get("old") != old_len:
        raise BatchError(f"counts.old is {counts.get('old')} but the old list has {old_len} rows")
    new_len = counts.get("new")
    if type(new_len) is not int or new_len < 0:
        raise BatchError(f"counts.new is {new_len!r}")
    for name, indexes in (("deleted", deleted), ("inserted", inserted), ("reloaded", reloaded),
                          ("moved[].from", [m.get("from") for m in moved])):
        if any(type(i) is not int for i in indexes):
            raise BatchError(f"rows.{name} holds a non-integer")
        if any(b <= a for a, b in zip(indexes, indexes[1:])):
            raise BatchError(f"rows.{name} is not strictly ascending")
    source = [None] * new_len
    gone = bytearray(old_len)

    def take_old(i, what):
        if not 0 <= i < old_len:
            raise BatchError(f"{what} {i} outside the old list of {old_len}")
        if gone[i]:
            raise BatchError(f"old row {i} named twice ({what})")
        gone[i] = 1

    def take_new(t, what):
        if type(t) is not int or not 0 <= t < new_len:
            raise BatchError(f"{what} {t!r} outside the new list of {new_len}")
        if source[t] is not None:
            raise BatchError(f"new position {t} named twice ({what})")

    for k, t in enumerate(inserted):
        take_new(t, "insert")
        source[t] = ("i", k)
    for i in deleted:
        take_old(i, "delete")
    for move in moved:
        take_old(move["from"], "move source")
        take_new(move.get("to"), "move destination")
        source[move["to"]] = ("o", move["from"], -1)
    reload_of = {}
    for k, i in enumerate(reloaded):
        if not 0 <= i < old_len:
            raise BatchError(f"reload {i} outside the old list of {old_len}")
        if gone[i]:
            raise BatchError(f"old row {i} is reloaded and deleted or moved away")
        reload_of[i] = k
    i = 0
    for p in range(new_len):
        if source[p] is None:
            while i < old_len and gone[i]:
                i += 1
            if i == old_len:
                raise BatchError(f"the fill runs out of old rows at new position {p}")
            source[p] = ("o", i, reload_of.get(i, -1))
            i += 1
    while i < old_len and gone[i]:
        i += 1
    if i < old_len:
        raise BatchError(f"the fill leaves old row {i} without a new position")
    return source


def apply_values(old, batch, values):
    """The new list from the old one, the batch and a feed answer's `values`."""
    src = fill(len(old), batch)
    try:
        ins, rel = values["rows"]["inserted"], values["rows"]["reloaded"]
    except (KeyError, TypeError):
        raise BatchError("values.rows.inserted or values.rows.reloaded missing")
    if len(ins) != len(batch["rows"].get("inserted", [])) or len(rel) != len(batch["rows"].get("reloaded", [])):
        raise BatchError("values not aligned with rows.inserted / rows.reloaded")
    new = []
    for s in src:
        if s[0] == "i":
            new.append(ins[s[1]])
        elif s[2] >= 0:
            item = rel[s[2]]
            if identity(item) != identity(old[s[1]]):
                raise BatchError(f"reloaded row {s[1]} gets content of another identity: {short(canon(item), 100)}")
            new.append(item)
        else:
            new.append(old[s[1]])
    return new


def check_against_new(old, batch, new):
    """For answers without `values` (POST /diff, PUT): applying the batch to old, with the
    content taken from new, must give new: inserted rows are new[to]; a reloaded row must
    land where new has an item of its identity; every other row must land unchanged."""
    src = fill(len(old), batch)
    if len(src) != len(new):
        raise BatchError(f"counts.new is {len(src)} but the new list has {len(new)} rows")
    for p, s in enumerate(src):
        if s[0] == "i":
            continue
        before = old[s[1]]
        if s[2] >= 0:
            if identity(before) != identity(new[p]):
                raise BatchError(f"old row {s[1]} reloaded lands at {p}, where the new list has another identity")
        elif before != new[p]:
            raise BatchError(f"old row {s[1]} ({short(canon(before), 80)}) lands unchanged at {p}, "
                             f"where the new list has {short(canon(new[p]), 80)}")


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"row {i}: got {short(canon(x), 80)}, model {short(canon(y), 80)}"
    return f"lengths {len(a)} and {len(b)}"
