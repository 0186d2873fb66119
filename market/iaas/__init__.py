"""The world of the `iaas` family (paper 003): the job stream and the spot price processes."""
