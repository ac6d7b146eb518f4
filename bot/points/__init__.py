"""Points as data: the Munitorum Field Manual (BSData/wh40k-11e-mfm YAML), the battle sizes of the Chapter
Approved file, and the imported versions kept for points news."""
