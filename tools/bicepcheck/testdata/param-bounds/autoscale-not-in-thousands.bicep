// want: the default 1500 is not a multiple of 1000
@minValue(1000)
param cosmosAutoscaleMaxThroughput int = 1500
