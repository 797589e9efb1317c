"""Hand-written helpers beside the generated client.

`earshot_client` is generated from api/openapi.json and never edited by hand (clients/generate.sh
rewrites it). What a generator cannot express lives here, in as little code as possible, and
uses only the generated models:

- `earshot_client_extras.facade` (`Earshot`, `EarshotError`, `unwrap`, exported here): the
  documented way of calling. Each method returns its success model or raises `EarshotError`
  (code, message, details, status) on any error answer, where the generated functions return
  `X | Error | None`.
- `earshot_client_extras.watch`: the watch stream (`GET /v1/stores/{store}/watch`) is NDJSON,
  one `WatchEvent` per line, which openapi-python-client answers as plain text. `watch()` reads
  the stream and `parse_watch_event()` turns each line into the generated `WatchChange`,
  `WatchHeartbeat` or `Error` (`Earshot.watch` raises the `Error` instead).
"""

from earshot_client_extras.facade import UNEXPECTED_RESPONSE, Earshot, EarshotError, unwrap

__all__ = ["UNEXPECTED_RESPONSE", "Earshot", "EarshotError", "unwrap"]
