// want: @minValue(0) accepts values below Azure's minimum 1
@minValue(0)
@maxValue(1000)
param flexMaximumInstanceCount int = 40
