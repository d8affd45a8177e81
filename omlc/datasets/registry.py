"""The benchmark data sets of the papers omlc reproduces: files, shapes, checksums.

Every number here was measured on checked copies of the files (instance, feature
and label counts, cardinality; they reproduce Mulan's published statistics) or,
for sets with no copy, taken from the papers' data tables (ALT Table 1, boosting
Table 2, CS-DPP Table 4, ANSGD Table 1). Full sha256 digests were computed on
those copies. A ``url`` is the byte-exact
origin of a file (a pinned GitHub commit for the shared copies), so its sha256
applies to what a download returns; ``homepage`` is the canonical page a paper
cites (Mulan distributes RAR archives there, which omlc does not unpack).

Where data sets live
--------------------
The *data directory* is ``$OMLC_DATA_DIR`` when set, else a folder in the user's
data directory: ``$XDG_DATA_HOME/omlc/datasets`` (``~/.local/share/omlc/datasets``
when ``XDG_DATA_HOME`` is unset) on Linux and macOS, ``%LOCALAPPDATA%\\omlc\\datasets``
on Windows. ``omlc datasets fetch NAME`` downloads a set there (one sub-folder
per set, checksums verified). ``find_files`` looks for a set's files in, in
order (:func:`search_locations`): the ``data_dir`` argument, every folder of
``$OMLC_DATA_DIR`` (``os.pathsep``-separated), ``../shared/datasets`` from the
current directory and beside the omlc checkout (a development layout), then the
download directory (``$OMLC_DOWNLOAD_DIR``, when set) and the default data
directory. ``omlc datasets list`` prints these folders.
"""
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional, Tuple

__all__ = ["FileInfo", "DatasetInfo", "get_dataset_info", "list_datasets", "find_files",
           "find_file", "search_dirs", "search_locations", "get_data_dir", "get_download_dir",
           "format_dataset_list", "format_dataset_info", "format_search_locations",
           "local_status", "suggest_names"]

SPLITS = ("train", "test", "full")
_COMPRESSION = (".bz2", ".gz", ".xz")

MULAN_HOME = "http://mulan.sourceforge.net/datasets-mlc.html"
LIBSVM_HOME = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multilabel.html"
_LIBSVM_ML = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multilabel/"
_MULAN_GH = ("https://raw.githubusercontent.com/tsoumakas/mulan/"
             "43f6389095ad71984264db4387a8074b22bc7d4a/data/multi-label/")
_BMR_GH = ("https://raw.githubusercontent.com/YoungHJung/OnlineMLRBoostingWithVFDT/"
           "ab77d1019b61611b7f41d10d2cbf5c59732afc52/data/")
_YEAST_SVM_GH = ("https://raw.githubusercontent.com/jalexcole/ai-demo/"
                 "b22c6dcd14579069a8fe35bef15515f4e52e1ae6/")

PAPERS = {
    "alt": "Zhai, Tang, Wang: adaptive label thresholding for online multi-label classification",
    "boosting": "Jung & Tewari: online boosting algorithms for multi-label ranking (AISTATS 2018)",
    "csdpp": "cost-sensitive dynamic principal projection (online label-space reduction)",
    "ansgd": "Park & Choi: online multi-label learning with accelerated nonsmooth SGD",
}


@dataclass(frozen=True)
class FileInfo:
    """One file of a data set. ``split`` is train/test/full, or xml (Mulan labels)."""
    filename: str
    split: str
    url: Optional[str] = None
    sha256: Optional[str] = None
    size: Optional[int] = None
    n_samples: Optional[int] = None
    cardinality: Optional[float] = None


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    title: str
    domain: str
    format: str                      # "arff" or "libsvm"
    files: Tuple[FileInfo, ...]
    n_train: Optional[int]
    n_test: Optional[int]
    n_features: int
    n_labels: int
    cardinality: Optional[float]     # whole data set (train + test), as the papers report
    papers: Tuple[str, ...]
    homepage: Optional[str] = None
    local_dirs: Tuple[str, ...] = ()
    parse_options: Dict = field(default_factory=dict)
    aliases: Tuple[str, ...] = ()
    notes: str = ""

    @property
    def xml(self):
        for f in self.files:
            if f.split == "xml":
                return f.filename
        return None

    @property
    def splits(self):
        return tuple(s for s in SPLITS if any(f.split == s for f in self.files))

    def files_for(self, split=None):
        """FileInfos holding ``split`` (None = full file, else train then test)."""
        if split is None:
            full = [f for f in self.files if f.split == "full"]
            if full:
                return full
            return ([f for f in self.files if f.split == "train"]
                    + [f for f in self.files if f.split == "test"])
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
        out = [f for f in self.files if f.split == split]
        if not out:
            raise ValueError(f"data set {self.name!r} has no {split!r} split "
                             f"(available: {', '.join(self.splits) or 'none'})")
        return out


def _mulan(name, title, domain, *, sub, files, xml, n_train, n_test, d, L, card, papers,
           notes="", aliases=(), base=_MULAN_GH, xml_base=None, parse_options=None, url=True):
    """An ARFF+XML Mulan set; ``files`` = (filename, split, sha256, bytes, n, card)."""
    infos = []
    for fn, split, digest, size, n, c in files:
        infos.append(FileInfo(fn, split, (base + sub + "/" + fn) if url else None,
                              digest, size, n, c))
    xfn, xdigest, xsize = xml
    xurl = None
    if url:
        xurl = (xml_base or (base + sub + "/")) + xfn
    infos.append(FileInfo(xfn, "xml", xurl, xdigest, xsize))
    return DatasetInfo(name, title, domain, "arff", tuple(infos), n_train, n_test, d, L, card,
                       tuple(papers), MULAN_HOME, (sub,), dict(parse_options or {}),
                       tuple(aliases), notes)


def _rcv1v2(kind, L, card):
    parts = [("rcv1_%s_test_%d.svm.bz2" % (kind, i), n)
             for i, n in enumerate((199_328, 199_339, 199_576, 183_022))]
    files = [FileInfo(f"rcv1_{kind}_train.svm.bz2", "train", _LIBSVM_ML + f"rcv1_{kind}_train.svm.bz2",
                      None, None, 23_149)]
    files += [FileInfo(fn, "test", _LIBSVM_ML + fn, None, None, n) for fn, n in parts]
    extra = (" sklearn's fetch_rcv1 defines 103 topic codes; 101 occur and LIBSVM keeps those."
             if kind == "topics" else "")
    return DatasetInfo(
        f"rcv1v2-{kind}", f"RCV1-v2 ({kind}), LYRL2004 chronological split", "text", "libsvm",
        tuple(files), 23_149, 781_265, 47_236, L, card, ("alt",), LIBSVM_HOME,
        ("rcv1v2", "rcv1"), {"n_features": 47_236}, (f"rcv1_{kind}", f"rcv1v2_{kind}"),
        "Not in the shared folder (no public copy found); the test split is four LIBSVM files "
        "(199,328 + 199,339 + 199,576 + 183,022 rows) that load() concatenates. Cosine-normalised "
        "log TF-IDF (unit rows). Cardinality is the ALT paper's whole-data figure. Checksums "
        "unknown; label ids are taken from the files (pass n_labels= to pin L)." + extra)


def _rcv1subset(k, card, distinct, digest, size):
    files = ((f"rcv1subset{k}.arff", "full", digest, size, 6000, card),) if digest else (
        (f"rcv1subset{k}.arff", "full", None, None, 6000, card),)
    xml = (f"rcv1subset{k}.xml",
           "e1028f4f10b8974d8881c30eb6e7f231ba248154999c85b8d7d95e18e10b2480" if digest else None,
           3226 if digest else None)
    note = ("Mulan rcv1v2 topic subset: 6000 docs, no train/test split. The shared copy is "
            "CONVERTED from mldr.datasets' rcv1sub%d.rda (labels last, sparse ARFF); it has no "
            "public download address, hence no url." % k)
    if card is None:
        note += (" Not in the shared folder; statistics unknown to omlc (no copy was checked and "
                 "no paper reports them).")
    if distinct:
        note += f" {distinct} distinct label sets."
    if k == 1:
        note += " The ANSGD paper's 'rcv1v2' is this set (5-fold CV)."
    return _mulan(f"rcv1subset{k}", f"RCV1-v2 topics, subset {k}", "text", sub=f"rcv1subset{k}",
                  files=files, xml=xml, n_train=None, n_test=None, d=47_236, L=101, card=card,
                  papers=("ansgd",) if k == 1 else (), notes=note, url=False)


_ENTRIES = [
    _rcv1v2("topics", 101, 3.241),
    _rcv1v2("regions", 228, 1.312),
    _rcv1v2("industries", 313, 0.696),
    _rcv1subset(1, 2.880, 1028, "29988fee1ad13c947ceacbdc674705481d5b957364dbfde48f04a0b45629041e", 8_254_044),
    _rcv1subset(2, 2.634, 954, "9feb6d24402f3443847b37eef88f57a61cfa3185a39ff81fe96fe1b0e806e947", 8_222_369),
    _rcv1subset(3, 2.614, 939, "17f69a2f8291e49c2e9dab783120b3f66a66a5226a69604e6c8db4c80a26cdf9", 8_286_052),
    _rcv1subset(4, None, None, None, None),
    _rcv1subset(5, None, None, None, None),
    _mulan("bibtex", "BibTeX tag recommendation", "text", sub="bibtex", files=(
        ("bibtex-train.arff", "train", "8dcc9de6e0b2cebaec8c1f4fac78431adeeb73cfd3ab879b530a66d366e59174", 2_292_961, 4880, 2.38),
        ("bibtex-test.arff", "test", "9b03329cde64d3f994bdf7fbbac3f3b10fe185c311cb9ae725475f59c7f3f922", 1_215_637, 2515, 2.444),
        ("bibtex.arff", "full", "a282a6d1fb3cdaf39bde3f81cd4e6079850a7a538a6bc44f8b4ed95dfe1e5014", 3_457_832, 7395, 2.402)),
        xml=("bibtex.xml", "08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232", 5880),
        n_train=4880, n_test=2515, d=1836, L=159, card=2.402, papers=("alt", "ansgd"),
        notes="Sparse ARFF, 1836 binary features."),
    _mulan("birds", "Bird species from audio", "audio", sub="birds", files=(
        ("birds-train.arff", "train", None, None, 322, None),
        ("birds-test.arff", "test", None, None, 323, None)),
        xml=("birds.xml", None, None), n_train=322, n_test=323, d=260, L=19, card=1.014,
        papers=("alt",),
        notes="Not in the shared folder. SOURCES.md says tsoumakas/mulan holds it at the pinned "
              "commit; the file names there are assumed (unverified). Many rows have no label."),
    _mulan("scene", "Scene classification", "images", sub="scene", files=(
        ("scene-train.arff", "train", "b53ba93bdf412de922e3960389bcee24744fa3e872ce610511fc1d750888b64d", 3_127_968, 1211, 1.062),
        ("scene-test.arff", "test", "ea38d20296b3ff7e220f477a3b802a9bcb2d768881fe6ee163efbc97ea527a42", 3_090_742, 1196, 1.086)),
        xml=("scene.xml", "55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5", 285),
        n_train=1211, n_test=1196, d=294, L=6, card=1.074, papers=("alt", "boosting", "csdpp"),
        notes="No whole-data file: split=None loads train followed by test (2407 rows)."),
    _mulan("emotions", "Emotions in music", "music", sub="emotions", files=(
        ("emotions-train.arff", "train", "bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98", 252_080, 391, 1.813),
        ("emotions-test.arff", "test", "f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f", 132_007, 202, 1.975),
        ("emotions.arff", "full", "6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b", 380_476, 593, 1.868)),
        xml=("emotions.xml", "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0", 323),
        n_train=391, n_test=202, d=72, L=6, card=1.869, papers=("alt", "boosting", "csdpp"),
        notes="Mulan's table gives cardinality 1.869; the file computes to 1.868."),
    _mulan("yeast", "Yeast gene functions", "biology", sub="yeast", files=(
        ("yeast-train.arff", "train", "e759dc991ff54694a4ff9c4314f3be0d6fd2b1994a4b563f57e416394c6aebbd", 1_501_117, 1500, 4.228),
        ("yeast-test.arff", "test", "4aaac102bff9669a765bf0b378602e5cc8c3b181048282e2f003117b496d552a", 918_515, 917, 4.252),
        ("yeast.arff", "full", "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7", 2_416_688, 2417, 4.237)),
        xml=("yeast.xml", "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247", 526),
        n_train=1500, n_test=917, d=103, L=14, card=4.237, papers=("alt", "boosting", "csdpp"),
        notes="Same split as yeast-libsvm."),
    DatasetInfo(
        "yeast-libsvm", "Yeast gene functions (LIBSVM multi-label text)", "biology", "libsvm", (
            FileInfo("yeast_train.svm.bz2", "train", _YEAST_SVM_GH + "yeast_train.svm.bz2",
                     "090471762c9c2d95864b28d21a5fe08e08e60e2b708efa45541f98246914a9a6", 581_983, 1500, 4.228),
            FileInfo("yeast_test.svm.bz2", "test", _YEAST_SVM_GH + "yeast_test.svm.bz2",
                     "d8771420d7c041829b6f8362d3af6ed5a11e9e922e319854bd1cd4999f05e7f0", 356_984, 917, 4.252)),
        1500, 917, 103, 14, 4.237, ("alt", "boosting", "csdpp"), LIBSVM_HOME, ("yeast_libsvm",),
        {"n_features": 103, "n_labels": 14, "zero_based": False, "label_base": 0},
        ("yeast_libsvm",),
        "Labels 0-based (0..13), features 1-based (1..103). The url is the copy SOURCES.md "
        "took the shared file from; the LIBSVM site serves the same set (multilabel/yeast_train.svm.bz2)."),
    DatasetInfo(
        "mediamill", "Mediamill video concepts (exp1 split)", "video", "libsvm", (
            FileInfo("train-exp1.svm.bz2", "train", _LIBSVM_ML + "mediamill/train-exp1.svm.bz2",
                     None, None, 30_993),
            FileInfo("test-exp1.svm.bz2", "test", _LIBSVM_ML + "mediamill/test-exp1.svm.bz2",
                     None, None, 12_914)),
        30_993, 12_914, 120, 101, 4.376, ("alt", "boosting", "csdpp", "ansgd"), MULAN_HOME,
        ("mediamill",), {"n_features": 120, "n_labels": 101}, (),
        "Not in the shared folder (the public ARFF copies are missing blobs or LFS pointers). "
        "Registered as LIBSVM from the LIBSVM site (same 30,993/12,914 exp1 split as Mulan's "
        "ARFF); checksums unknown. See mediamill-reduced for the 1500/500 subsample."),
    _mulan("mediamill-reduced", "Mediamill, 1500/500 random subsample (Jung & Tewari)", "video",
           sub="mediamill_reduced", files=(
        ("mediamill-train.arff", "train", "f4a562d2b78f5daedeafabc0747542ed2e4d5fd0bb20d348c53d63cc3a0b1e7c", 1_908_628, 1500, 4.437),
        ("mediamill-test.arff", "test", "7594040bfe35e09f674d1c15727d978f310c1106de49ea448764e4627b8b424d", 640_024, 500, 4.264)),
        xml=("mediamill.xml", "398a38599da3f390f4247e08c81c283817875d06a8278b10db3b514855e837dd", 3328),
        n_train=1500, n_test=500, d=120, L=101, card=4.39, papers=("boosting",),
        base=_BMR_GH, xml_base=_BMR_GH + "mediamill/", aliases=("m-reduced", "mediamill_reduced"),
        notes="Shipped with the OnlineBMR code; selection procedure undocumented. 53 train / 22 "
              "test rows have no label."),
    _mulan("enron", "Enron e-mail folders", "text", sub="enron", files=(
        ("enron-train.arff", "train", "2988cefc1cdf7a8004a20ef84615cc8fa1b5d7434c16687283b41454e2d9d194", 607_799, 1123, 3.386),
        ("enron-test.arff", "test", "2f3aad54a8f54caaab4ab01246fe9dd385ba944a2633028f52747b57eac5474e", 324_140, 579, 3.363),
        ("enron.arff", "full", "d0889ef0576d4e7b5ec0df3b3e4760e476ac11a6e7d7ddeee4c4a34470dedf97", 906_705, 1702, 3.378)),
        xml=("enron.xml", "ed40c92d7f613eed51714912cab10dddc4ce456262137d8fef230d44c7f4457b", 1604),
        n_train=1123, n_test=579, d=1001, L=53, card=3.378, papers=("csdpp",),
        notes="Sparse ARFF, binary nominal bag-of-words."),
    _mulan("medical", "Clinical free text (ICD-9 codes)", "text", sub="medical", files=(
        ("medical-train.arff", "train", "c764f45756ab1c553b8b4eaaf5605a5610a43bbbcf37492d0f1a12bf9c9e2244", 69_680, 333, 1.255),
        ("medical-test.arff", "test", "6be472e75a6c0b0916187f343a398011b1b26f8f0ddc682c575312ad3532f6c4", 99_124, 645, 1.24),
        ("medical.arff", "full", "ad0630a9a409ed0023c3bb56a0be7610b635c1ca185c6035e3b198b01167aac4", 129_626, 978, 1.245)),
        xml=("medical.xml", "51fa9d5c09e48caff3f0a0c75db1c9aa85944f8e35451f3ad8bd56fc422286ce", 1818),
        n_train=333, n_test=645, d=1449, L=45, card=1.245, papers=("csdpp",),
        notes="Train (333) is smaller than test (645), as Mulan distributes it."),
    _mulan("corel5k", "Corel 5k image annotation", "images", sub="corel5k", files=(
        ("Corel5k-train-sparse.arff", "train", "19eb253c447144bea74ffa86b4731a56022addae2ba7d0aab72ad07fdc02e9b3", 339_535, 4500, 3.522),
        ("Corel5k-test-sparse.arff", "test", "e8f8e9cd052c43ba7bdfdf99d242f461fc8c2a03163466d921e576887b51d8a7", 60_876, 500, 3.526),
        ("Corel5k-sparse.arff", "full", "12c06161d2367f919f6da912089a6c9180c115cfcefa37afacfdeb903930eb7e", 377_579, 5000, 3.522)),
        xml=("Corel5k.xml", "54ef6a6ccb7ca9b77524052b34b306d5d501661a5609b9d1cc7085b2b597679d", 11_222),
        n_train=4500, n_test=500, d=499, L=374, card=3.522, papers=("csdpp", "ansgd"),
        notes="Sparse versions only."),
    _mulan("delicious", "del.icio.us bookmark tags", "text", sub="delicious", files=(
        ("delicious-train.arff", "train", "030186cdb542ebdd32052fcdbb1ebe30115b3a22518c1b4b198c45eb827aebe1", 3_056_590, 12920, 19.047),
        ("delicious-test.arff", "test", "2dfb01723a819914b0ca83361177ed413ce3f2169851d9f228d4692915d63944", 757_565, 3185, 18.91),
        ("delicious.arff", "full", "b944de0bca910050c11d97eed57d17b073110ea3646a587f3d15d127cf581aab", 3_773_732, 16105, 19.02)),
        xml=("delicious.xml", "4e0c0f93c7d86a39b9fca4aaefaa00e9428f2c80277732dfbf03ca48e2c14da2", 34_303),
        n_train=12920, n_test=3185, d=500, L=983, card=19.020, papers=("csdpp",),
        notes="14 rows have no label. CS-DPP subsamples 7500 rows per permutation."),
    _mulan("cal500", "CAL500 song annotation", "music", sub="cal500", files=(
        ("cal500.arff", "full", "cfe6097ba5fd6e8584e54911ab9783dcab34e898446b7c9370c71d477eae56d3", 492_857, 502, 26.044),),
        xml=("cal500.xml", "877e128531268d7661faa3e44f7bb43cbcda829c0895e49879168775b192728c", 7901),
        n_train=None, n_test=None, d=68, L=174, card=26.044, papers=("csdpp",), aliases=("CAL500",),
        notes="No predefined train/test split."),
    DatasetInfo(
        "tmc2007", "SIAM text mining competition 2007 (full vocabulary)", "text", "arff", (),
        None, None, 49_060, 22, 2.158, ("ansgd",), MULAN_HOME, ("tmc2007",), {}, (),
        "Not available: the full 49,060-feature Mulan ARFF is a missing blob in tsoumakas/mulan; "
        "28,596 rows, used with 5-fold CV by ANSGD. LIBSVM's tmc2007_train/test.svm.bz2 "
        "(21,519/7,077 rows, 30,438 features) is a different vectorisation; Mulan's tmc2007-500 "
        "has 500 features."),
    DatasetInfo(
        "bookmarks", "Bibsonomy bookmarks", "text", "arff", (), None, None, 2150, 208, 2.028,
        ("ansgd",), MULAN_HOME, ("bookmarks",), {}, ("bookmark",),
        "Not available (missing blob in tsoumakas/mulan, LFS pointer elsewhere); 87,856 rows."),
    DatasetInfo(
        "nuswide", "NUS-WIDE (cVLAD+ features)", "images", "arff", (), None, None, 128, 81, 1.869,
        ("csdpp",), MULAN_HOME, ("nuswide", "nus-wide"), {}, ("nus-wide",),
        "Not available (LFS pointers only); CS-DPP subsamples 50,000 rows."),
    DatasetInfo(
        "eurlex-ev", "EUR-Lex, EuroVoc descriptors", "text", "arff", (), None, None, 5000, 3993, 5.310,
        ("csdpp",), MULAN_HOME, ("eurlex", "eurlex-ev"), {}, ("eurlex-eurovoc", "eurlex-eurovec"),
        "Not available (not in tsoumakas/mulan; LFS pointers elsewhere). CS-DPP subsamples 7500 rows."),
]

REGISTRY = {e.name: e for e in _ENTRIES}
_ALIASES = {}
for _e in _ENTRIES:
    for _a in (_e.name,) + _e.aliases:
        _ALIASES[_a.lower()] = _e.name
        _ALIASES[_a.lower().replace("_", "-")] = _e.name


def get_dataset_info(name):
    """The :class:`DatasetInfo` of a registered set (names and aliases, any case)."""
    key = str(name).lower()
    real = _ALIASES.get(key) or _ALIASES.get(key.replace("_", "-"))
    if real is None:
        raise KeyError(f"unknown data set {name!r}; known: {', '.join(list_datasets())}")
    return REGISTRY[real]


def list_datasets(paper=None):
    """Registered names, sorted; ``paper`` ("alt", "boosting", "csdpp", "ansgd") filters."""
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"paper must be one of {sorted(PAPERS)}")
    return sorted(n for n, e in REGISTRY.items() if paper is None or paper in e.papers)


# ----------------------------------------------------------------------- lookup

def _user_data_dir():
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "omlc" / "datasets"
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "omlc" / "datasets"


def _env_data_dirs():
    env = os.environ.get("OMLC_DATA_DIR")
    return [Path(p).expanduser() for p in env.split(os.pathsep) if p] if env else []


def get_data_dir():
    """The data directory: the first folder of ``$OMLC_DATA_DIR``, else the
    user's data folder (see the module notes). It need not exist yet."""
    env = _env_data_dirs()
    return env[0] if env else _user_data_dir()


def get_download_dir():
    """Where downloads go: ``$OMLC_DOWNLOAD_DIR`` when set, else the data directory."""
    env = os.environ.get("OMLC_DOWNLOAD_DIR")
    if env:
        return Path(env).expanduser()
    return get_data_dir()


def _repo_root():
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").exists() or (root / "setup.py").exists():
        return root
    return None


def search_locations(data_dir=None):
    """Every folder searched for data files, in order, as ``(path, why)``; a
    folder that does not exist is listed too (``search_dirs`` skips it)."""
    cands = []
    if data_dir is not None:
        cands.append((Path(data_dir).expanduser(), "data_dir argument"))
    cands += [(p, "OMLC_DATA_DIR") for p in _env_data_dirs()]
    cands.append((Path.cwd().parent / "shared" / "datasets", "../shared/datasets from the current folder"))
    repo = _repo_root()
    if repo is not None:
        cands.append((repo.parent / "shared" / "datasets", "../shared/datasets beside the omlc checkout"))
    if os.environ.get("OMLC_DOWNLOAD_DIR"):
        cands.append((get_download_dir(), "OMLC_DOWNLOAD_DIR"))
    cands.append((_user_data_dir(), "default data directory"))
    out, seen = [], set()
    for path, why in cands:
        try:
            key = path.resolve()
        except OSError:
            continue
        if key not in seen:
            seen.add(key)
            out.append((key, why))
    return out


def search_dirs(data_dir=None):
    """The directories searched for data files, in order, existing ones only."""
    return [p for p, _ in search_locations(data_dir) if p.is_dir()]


def format_search_locations(data_dir=None):
    """Lines saying where data sets are looked for and where ``fetch`` puts them."""
    rows = search_locations(data_dir)
    width = max(len(str(p)) for p, _ in rows)
    dl = get_download_dir().resolve()
    lines = ["Data sets are looked for in (first match wins):"]
    for p, why in rows:
        notes = [why] + ([] if p.is_dir() else ["absent"])
        if p == dl:
            notes.append("'omlc datasets fetch NAME' downloads here")
        lines.append(f"  {str(p).ljust(width)}  ({'; '.join(notes)})")
    lines.append("Set OMLC_DATA_DIR to a folder to look there first and download there.")
    return "\n".join(lines)


def suggest_names(name, n=3):
    """Registered names (and aliases) close to a misspelt ``name``."""
    import difflib
    out = []
    for k in difflib.get_close_matches(str(name).lower(), list(_ALIASES), n=2 * n, cutoff=0.6):
        if _ALIASES[k] not in out:
            out.append(_ALIASES[k])
    return out[:n]


def _variants(filename):
    yield filename
    low = filename.lower()
    for ext in _COMPRESSION:
        if low.endswith(ext):
            yield filename[:-len(ext)]
            return
    for ext in _COMPRESSION:
        yield filename + ext


def _find_in(directory, filename):
    for v in _variants(filename):
        p = directory / v
        if p.is_file():
            return p
    try:
        # Case differences (CAL500.arff vs cal500.arff) are common between mirrors.
        names = {p.name.lower(): p for p in directory.iterdir() if p.is_file()}
    except OSError:
        return None
    for v in _variants(filename):
        if v.lower() in names:
            return names[v.lower()]
    return None


def _subdirs(info):
    seen = []
    for s in info.local_dirs + (info.name,) + info.aliases:
        if s not in seen:
            seen.append(s)
    return seen


def find_file(name, filename, data_dir=None):
    """Path of one file of a registered set, or ``FileNotFoundError``."""
    info = get_dataset_info(name)
    dirs = search_dirs(data_dir)
    for root in dirs:
        for sub in _subdirs(info):
            p = _find_in(root / sub, filename)
            if p is not None:
                return p
        p = _find_in(root, filename)
        if p is not None:
            return p
    url = next((f.url for f in info.files if f.filename == filename and f.url), None)
    hint = (f"; download it with 'omlc datasets fetch {info.name}' (Python: "
            f"omlc.datasets.fetch({info.name!r}))") if url else ""
    raise FileNotFoundError(
        f"{filename} ({info.name}) not found under {', '.join(map(str, dirs)) or 'any data dir'}"
        f" (set OMLC_DATA_DIR or pass data_dir=){hint}")


def find_files(name, split=None, data_dir=None):
    """Local paths of a set's data files for ``split`` ("train", "test", or None =
    the whole-data file, else train followed by test), in load order."""
    info = get_dataset_info(name)
    if not info.files:
        raise FileNotFoundError(f"{info.name}: no files are registered ({info.notes})")
    return [find_file(info.name, f.filename, data_dir) for f in info.files_for(split)]


def local_status(name, data_dir=None):
    """"yes" (every file present), "partial", or "no"."""
    info = get_dataset_info(name)
    if not info.files:
        return "no"
    found = 0
    for f in info.files:
        try:
            find_file(info.name, f.filename, data_dir)
            found += 1
        except FileNotFoundError:
            pass
    return "yes" if found == len(info.files) else ("partial" if found else "no")


# ------------------------------------------------------------------- text output

def _fmt(v, spec=","):
    if v is None:
        return "-"
    return format(v, spec)


def format_dataset_list(data_dir=None, paper=None):
    """A plain-text table of the registry: name, sizes, shape, cardinality, local copy."""
    header = ("name", "n_train", "n_test", "d", "L", "card", "format", "local", "papers")
    rows = [header]
    for n in list_datasets(paper):
        e = REGISTRY[n]
        rows.append((n, _fmt(e.n_train), _fmt(e.n_test), _fmt(e.n_features), _fmt(e.n_labels),
                     _fmt(e.cardinality, ".3f"), e.format, local_status(n, data_dir),
                     ",".join(e.papers) or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    right = {1, 2, 3, 4, 5}
    lines = []
    for k, r in enumerate(rows):
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_dataset_info(name, data_dir=None):
    """A plain-text description of one registered set, with where its files are."""
    e = get_dataset_info(name)
    out = [f"{e.name}: {e.title}",
           f"  domain      {e.domain}",
           f"  format      {e.format}" + (f" (+ Mulan XML {e.xml})" if e.xml else ""),
           f"  samples     train {_fmt(e.n_train)}, test {_fmt(e.n_test)}",
           f"  features    {_fmt(e.n_features)}",
           f"  labels      {_fmt(e.n_labels)}, cardinality {_fmt(e.cardinality, '.3f')}",
           "  papers      " + (", ".join(f"{p} ({PAPERS[p]})" for p in e.papers) or "-"),
           f"  homepage    {e.homepage or '-'}"]
    if e.aliases:
        out.append(f"  aliases     {', '.join(e.aliases)}")
    if e.parse_options:
        out.append(f"  options     {e.parse_options}")
    out.append("  files:")
    if not e.files:
        out.append("    (none registered)")
    for f in e.files:
        try:
            where = str(find_file(e.name, f.filename, data_dir))
        except FileNotFoundError:
            where = "not found locally"
        bits = [f.split]
        if f.n_samples is not None:
            bits.append(f"{f.n_samples:,} rows")
        if f.cardinality is not None:
            bits.append(f"card {f.cardinality:g}")
        if f.size is not None:
            bits.append(f"{f.size:,} bytes")
        out.append(f"    {f.filename}  [{', '.join(bits)}]")
        out.append(f"      sha256 {f.sha256 or 'unknown'}")
        out.append(f"      url    {f.url or '-'}")
        out.append(f"      local  {where}")
    if e.notes:
        out.append(f"  notes       {e.notes}")
    return "\n".join(out)
