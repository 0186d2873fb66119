"""What more than one family of mechanisms uses: online policy selection, ..."""
