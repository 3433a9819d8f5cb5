"""Run the cases of cases/*.yaml (bench/sweep-issue22/cases format: files, profile, want) through
each pmanifest given and print now vs want.  python3 check.py PMANIFEST..."""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

for pm in sys.argv[1:]:
    print(pm)
    for cf in sorted(Path(__file__).with_name("cases").glob("*.yaml")):
        for case in yaml.safe_load(cf.read_text())["cases"]:
            with tempfile.TemporaryDirectory() as tmp:
                for rel, text in case["files"].items():
                    p = Path(tmp, rel)
                    p.parent.mkdir(parents=True, exist_ok=True)
                    p.write_text(text)
                r = subprocess.run([pm, "lint", "--format", "json", "--allow-empty", "--profile",
                                    case.get("profile", "together"), *sorted(case["files"])],
                                   cwd=tmp, capture_output=True, text=True, check=False)
                found = json.loads(r.stdout)["findings"]
                now = sorted(f["rule"] for f in found if f["severity"] in ("error", "warning"))
                mark = "ok" if now == sorted(case["want"]) else "XX"
                print(f"  {mark} {case['name']}\n       now {now} want {case['want']}")
