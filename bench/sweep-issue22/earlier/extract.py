"""Write every blob of each repository's commit (commits.tsv: name, owner/name, commit) that the
stored snapshot holds into repos/NAME, and count the blobs it does not hold (git archive stops at
the first absent one).  python3 extract.py  (run in the directory holding commits.tsv)"""

import subprocess
from pathlib import Path


def main() -> None:
    for line in Path("commits.tsv").read_text().splitlines():
        name, full, commit = line.split()
        gitdir = f"--git-dir=/work/.mirror/{full.replace('/', '+')}/repo"
        tree = subprocess.run(["git", gitdir, "ls-tree", "-r", "-z", commit],
                              capture_output=True, check=True).stdout.split(b"\0")
        entries = []
        for entry in filter(None, tree):
            meta, path = entry.split(b"\t", 1)
            mode, kind, sha = meta.split()
            if kind == b"blob" and mode != b"120000":
                entries.append((sha, path.decode("utf-8", "surrogateescape")))
        cat = subprocess.Popen(["git", gitdir, "cat-file", "--batch"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert cat.stdin is not None and cat.stdout is not None
        absent, absent_yaml, written = 0, 0, 0
        for sha, path in entries:
            cat.stdin.write(sha + b"\n")
            cat.stdin.flush()
            header = cat.stdout.readline().split()
            if header[-1] == b"missing":
                absent += 1
                absent_yaml += path.lower().endswith((".yaml", ".yml", ".json"))
                continue
            data = cat.stdout.read(int(header[2]))
            cat.stdout.read(1)
            out = Path("repos", name, path)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            written += 1
        cat.stdin.close()
        cat.wait()
        print(name, commit[:7], "written", written, "absent", absent, "absent yaml/json",
              absent_yaml)


if __name__ == "__main__":
    main()
