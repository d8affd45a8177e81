"""The River bridge's dict -> row path on rcv1-shaped rows (75 named features,
101 labels given as a {label: bool} dict): the compiled hashing of the whole
row and the label dict, and one learn_one end to end (PA-I-BR and FALT, whose
rows go through omlc._core.hashing.RowPath in one call). As in a River stream,
every row's label dict is built from the same label-name objects (label_ids'
memo then skips the lookups)."""
import numpy as np

import omlc
from omlc._core.hashing import hash_row, label_ids
from omlc.river import RiverMultiLabel

L = 101


class DictRows:
    def setup(self):
        rng = np.random.default_rng(0)
        self.rows = []
        for _ in range(1000):
            cols = rng.choice(47_236, 75, replace=False)
            x = {f"w{j}": float(v) for j, v in zip(cols, rng.random(75))}
            rel = set(rng.choice(L, 3, replace=False).tolist())
            self.rows.append((x, {f"L{k}": k in rel for k in range(L)}))
        self.ids = {f"L{k}": k for k in range(L)}
        names = list(self.ids)
        self.shared = [(x, {names[k]: v for k, v in enumerate(y.values())}) for x, y in self.rows]
        self.memo = []
        self.model = RiverMultiLabel(omlc.PassiveAggressiveBR(), n_features=2 ** 16, max_labels=L)
        self.falt = RiverMultiLabel(omlc.FALT(eta=0.5), n_features=2 ** 16, max_labels=L)
        for x, y in self.shared[:100]:
            self.model.learn_one(x, y)
            self.falt.learn_one(x, y)

    def time_hash_1000_rows(self):
        for x, _ in self.rows:
            hash_row(x, 2 ** 16)

    def time_label_ids_1000_rows(self):
        for _, y in self.rows:
            label_ids(y, self.ids)

    def time_label_ids_memo_1000_rows(self):
        for _, y in self.shared:
            label_ids(y, self.ids, self.memo)

    def time_learn_one_1000_rows_pa(self):
        for x, y in self.rows:
            self.model.learn_one(x, y)

    def time_learn_one_1000_rows_falt(self):
        for x, y in self.shared:
            self.falt.learn_one(x, y)
