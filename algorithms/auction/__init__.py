"""The `auction` family: online auctions for LoRA fine-tuning tasks (paper 001).
`family` is the interface the sweep engine calls."""
