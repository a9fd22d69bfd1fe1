# json: encode and decode nested data, floats printed with repr (shortest
# round-trip digits), sorted keys, unicode escaping and the C accelerator.
import json

data = {
    "name": "dgad \u00e9t\u00e9 \u2603",
    "numbers": [0, -1, 2**63, 1.5, 1e-300, 1 / 3, 2.5e+20],
    "nested": {"list": [[1, 2], [3, [4, [5]]]], "empty": {}, "none": None, "flags": [True, False]},
    "escapes": "tab\tnewline\nquote\"backslash\\",
}
text = json.dumps(data, sort_keys=True)
print(text)
print(json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False))
back = json.loads(text)
print("round trip equal:", back == data)
big = [{"id": i, "value": i * 0.1, "tags": ["t%d" % (i % 7)] * (i % 3)} for i in range(20000)]
encoded = json.dumps(big)
print("big length:", len(encoded), "decoded items:", len(json.loads(encoded)))
print("sum of values:", repr(sum(item["value"] for item in json.loads(encoded))))
try:
    json.loads('{"unterminated": [1, 2')
except json.JSONDecodeError as e:
    print("decode error:", e.msg, "at", e.pos)
print("END json_roundtrip")
