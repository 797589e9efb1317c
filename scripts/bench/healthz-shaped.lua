-- wrk script (scripts/bench-http.sh with BENCH_SHAPE=1): GET /healthz sent with each check's
-- request as check.lua sends it (its content-type and bearer token headers, its JSON body),
-- and every answer verified as healthz.lua verifies it. Beside /healthz and the check, it
-- shows what receiving a check's request costs on its own: the server reads the same bytes,
-- runs the same middleware, and answers /healthz's 15 bytes without parsing the body.
-- Arguments (after `--`): the data file written by setup.py, the bearer token ("-" for none).
--
-- check.lua's functions are loaded and two replaced: `init` formats the same requests for
-- /healthz, and `response` checks a health answer; `setup`, `request` and `done` are its own.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "check.lua")

local check_init = init
function init(args)
  check_init(args)
  local reqs = dofile(args[1])
  for k, r in ipairs(reqs) do
    formatted[k] = wrk.format("GET", "/healthz", nil, r.body)
  end
end

function response(status, headers, body)
  n = n + 1
  if status ~= 200 or not body:find('"ok"', 1, true) then bad = bad + 1 end
end
