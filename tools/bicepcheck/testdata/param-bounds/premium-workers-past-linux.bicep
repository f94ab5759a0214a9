// want: @maxValue(100) accepts values above Azure's maximum 20
@minValue(1)
@maxValue(100)
param maximumElasticWorkerCount int = 20
