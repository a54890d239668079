"""The README's API-coverage section is the one tools/api_coverage.py computes from torch and torchlike now."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "tools" / "api_coverage.py")
api_coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_coverage)


def test_readme_coverage_section_is_current():
    cov = api_coverage.coverage()
    section = api_coverage.readme_section((ROOT / "README.md").read_text())
    assert section == api_coverage.render(cov), "run: python tools/api_coverage.py --write"


def test_day_one_names_are_torch_names():
    import torch
    for module, names in api_coverage.DAY_ONE.items():
        theirs = api_coverage._resolve(torch, module)
        missing = [n for n in names if not hasattr(theirs, n)]
        assert not missing, (module, missing)
