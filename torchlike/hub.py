"""torch.hub's checkpoint downloads: ``load_state_dict_from_url`` (download once into ``<hub_dir>/checkpoints``,
then ``torchlike.load`` the cached file), ``download_url_to_file``, ``get_dir``/``set_dir``. Any URL
``urllib`` opens works (``file://`` included); a file already in the cache is loaded without opening the URL.
``hub.load``/``list``/``help`` (fetching and running a GitHub repository's hubconf.py) are not here."""
import errno
import hashlib
import os
import re
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request
import uuid
import warnings
import zipfile

from .serialization import load

__all__ = ["download_url_to_file", "get_dir", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # the sha256 prefix in a file name: bfd8deac of resnet18-bfd8deac.pth
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
READ_DATA_CHUNK = 128 * 1024
_hub_dir = [None]  # set_dir's directory


class _Faketqdm:
    """torch's stand-in for tqdm when it is not installed: the progress written to stderr."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        sys.stderr.write(f"\r{self.n:.1f} bytes" if self.total is None else f"\r{100 * self.n / self.total:.1f}%")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.disable:
            sys.stderr.write("\n")


try:
    from tqdm import tqdm
except ImportError:
    tqdm = _Faketqdm


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME,
                                                                                DEFAULT_CACHE_DIR), "torch")))


def get_dir():
    """The hub's cache directory: ``set_dir``'s, else ``$TORCH_HOME/hub`` (``$TORCH_HOME`` defaults to
    ``$XDG_CACHE_HOME/torch``, that to ``~/.cache/torch``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    return _hub_dir[0] if _hub_dir[0] is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Use ``d`` as the hub's cache directory."""
    _hub_dir[0] = os.path.expanduser(d)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` to the path ``dst`` (through a temporary file, moved into place when complete); with
    ``hash_prefix``, the file's SHA256 must start with it."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp_dst, "w+b")  # noqa: SIM115 - closed in the finally below
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    request = urllib.request.Request(url, headers={"User-Agent": "torch.hub"})
    try:
        with urllib.request.urlopen(request) as u:
            length = u.info().get_all("Content-Length")
            file_size = int(length[0]) if length else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with tqdm(total=file_size, disable=not progress, unit="B", unit_scale=True, unit_divisor=1024) as pbar:
                while buffer := u.read(READ_DATA_CHUNK):
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    pbar.update(len(buffer))
            f.close()
            if sha256 is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _is_legacy_zip_format(filename):
    """A zip holding one file: a pre-1.6 ``torch.save`` file zipped by hand, which the hub still unpacks."""
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            members = zf.infolist()
        return len(members) == 1 and not members[0].is_dir()
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default "
                  "zipfile format introduced in 1.6. Please redo torch.save() to save it in the new zipfile format.",
                  FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as zf:
        member = zf.infolist()[0]
        name = os.path.normpath(member.filename)
        if os.path.isabs(name) or ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zf.extract(member, model_dir)
    return load(os.path.join(model_dir, member.filename), map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """``torchlike.load`` of the file at ``url``, downloaded into ``model_dir`` (default
    ``<get_dir()>/checkpoints``) unless already there. ``check_hash``: the name's ``-<sha256 prefix>.`` part
    must match the download. ``file_name`` names the cached file (default: the URL's)."""
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urllib.parse.urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return load(cached_file, map_location=map_location, weights_only=weights_only)
