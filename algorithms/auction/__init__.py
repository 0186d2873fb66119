"""The `auction` family: online auctions for LoRA fine-tuning tasks (paper 001_16667b406bf23ec3.txt).
`family` is the interface the sweep engine calls."""
