package pkg

func longTestHelperIsNotMeasured() {
}
