// want: param flexMaximumInstanceCount: declares no @maxValue
@minValue(1)
param flexMaximumInstanceCount int = 40
