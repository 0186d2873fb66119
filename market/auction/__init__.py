"""The world of the `auction` family (paper 001): the GPU cluster, LoRA tasks, labor vendors and
arrival traces."""
