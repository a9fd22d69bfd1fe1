# re: compiled patterns, groups, findall, sub with a callback, flags,
# lookarounds and unicode classes over a generated text.
import re

words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "\u00e9clair", "na\u00efve"]
text = " ".join("%s%d" % (words[i % len(words)], (i * 37) % 1000) for i in range(5000))

print("findall count:", len(re.findall(r"\b[a-z]+\d{3}\b", text)))
print("gamma numbers:", re.findall(r"gamma(\d+)", text)[:10])
date = re.compile(r"(?P<year>\d{4})-(?P<month>\d\d)-(?P<day>\d\d)")
m = date.search("released on 2024-02-29, patched 2024-03-01")
print("named groups:", m.groupdict(), "span:", m.span())
print("all dates:", [d.group(0) for d in date.finditer("2001-01-01 x 1999-12-31 y 2024-02-29")])
print("sub callback:", re.sub(r"\d+", lambda mo: str(int(mo.group()) * 2), "a1 b22 c333"))
print("ignorecase:", len(re.findall(r"ALPHA", text, re.IGNORECASE)))
print("lookahead:", re.findall(r"\w+(?=\d{3}\b)", "abc123 de45 fgh678")[:5])
print("unicode words:", re.findall(r"\w+", "caf\u00e9 na\u00efve \u00fcber stra\u00dfe")[:4])
print("split:", re.split(r"[,;]\s*", "a, b;c ,d;  e"))
print("multiline anchors:", re.findall(r"^\w+$", "one\ntwo three\nfour", re.MULTILINE))
print("no match:", re.match(r"z+", text))
print("END re_matching")
