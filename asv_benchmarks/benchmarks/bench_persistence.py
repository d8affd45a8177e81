"""omlc.save / omlc.load_model of an rcv1-shaped linear model (47,236 x 102
float64 weights, 38.5 MB) and of SALT (weights + AdaGrad accumulators): the
cost of writing the container and of validating every array on load."""
import os
import tempfile

import numpy as np
import scipy.sparse as sp

import omlc

D, L = 47_236, 101


class SaveLoad:
    params = ["FALT", "SALT"]
    param_names = ["learner"]

    def setup(self, learner):
        rng = np.random.default_rng(0)
        X = sp.random(200, D, density=75 / D, format="csr", random_state=0)
        Y = sp.csr_matrix((rng.random((200, L)) < 3.2 / L).astype(np.int32))
        self.model = getattr(omlc, learner)().partial_fit(X, Y)
        self.dir = tempfile.mkdtemp()
        self.path = omlc.save(self.model, os.path.join(self.dir, "m.omlc"))

    def time_save(self, learner):
        omlc.save(self.model, self.path)

    def time_load(self, learner):
        omlc.load_model(self.path)
