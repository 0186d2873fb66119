"""The spot arena (docs/arena.md): one market, one stream of deadline jobs and one
accounting on which the spot-allocation mechanisms of paper 000 (`spot` family) and paper 003
(`iaas` family) compete, with the shared meta-learner choosing among them online.

A composition room like `reproduction/`: it imports `market/*` and `algorithms/*` of several
families, never Ray, MLflow or Hydra.
"""
