import subprocess
import sys

from bayeval.cli import main


def test_demo_prints_a_summary(capsys):
    assert main(["demo", "--draws", "200", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "average precision" in out and "hdi_3%" in out and "truth" in out


def test_module_entry_point_reports_bad_usage():
    res = subprocess.run([sys.executable, "-m", "bayeval", "nope"], capture_output=True, text=True)
    assert res.returncode != 0 and "invalid choice" in res.stderr
