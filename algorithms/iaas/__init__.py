"""The `iaas` family (paper 003, cost-optimal IaaS policies with online learning): self-owned
instances (eq. 2-5), one job on spot and on-demand instances (Proportion, Proposition 4, the
theta policies) with the cloud's billing; in progress (docs/iaas/mechanisms.md)."""
